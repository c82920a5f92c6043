#include "analyzer/summary/idle_interval_rows.h"

#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace gs::analyzer {
namespace {

namespace fs = std::filesystem;

// A row whose every field depends on `i` (sites of many lengths, most of them empty).
IdleIntervalRow MakeRow(uint64_t i) {
  IdleIntervalRow r;
  r.device = static_cast<uint32_t>(i % 3);
  r.start_ns = static_cast<TimeNs>(i * 1000) - 500;  // the first is negative
  r.end_ns = r.start_ns + static_cast<TimeNs>(i % 977) + 1;
  r.cause = static_cast<Cause>(i % kNumCauses);
  for (int c = 0; c < kNumCauses; ++c) r.by_cause[c] = static_cast<TimeNs>(i * 7 + c);
  r.after_sync = i % 5 == 0;
  if (r.after_sync) r.after_sync_site = std::string(i % 300, static_cast<char>('a' + i % 26)) + "\n,\"x";
  r.stack_id = i * 0x9e3779b97f4a7c15ull;
  return r;
}

void ExpectSame(const IdleIntervalRow& got, const IdleIntervalRow& want) {
  EXPECT_EQ(got.device, want.device);
  EXPECT_EQ(got.start_ns, want.start_ns);
  EXPECT_EQ(got.end_ns, want.end_ns);
  EXPECT_EQ(got.cause, want.cause);
  EXPECT_EQ(got.by_cause, want.by_cause);
  EXPECT_EQ(got.after_sync, want.after_sync);
  EXPECT_EQ(got.after_sync_site, want.after_sync_site);
  EXPECT_EQ(got.stack_id, want.stack_id);
}

std::string FreshDir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

TEST(IdleIntervalRowsTest, RowsComeBackInTheOrderAppended) {
  IdleIntervalRows rows(FreshDir("rows_order"));
  constexpr uint64_t kRows = 50'000;  // several times the file's buffer
  for (uint64_t i = 0; i < kRows; ++i) rows.Append(MakeRow(i));
  IdleIntervalRow big = MakeRow(kRows);
  big.after_sync = true;
  big.after_sync_site = std::string(3 << 20, 's');  // larger than the buffer on its own
  rows.Append(big);
  EXPECT_EQ(rows.size(), kRows + 1);
  uint64_t seen = 0;
  ASSERT_TRUE(rows.ForEach([&](const IdleIntervalRow& r) {
    ExpectSame(r, seen < kRows ? MakeRow(seen) : big);
    ++seen;
  }).ok());
  EXPECT_EQ(seen, kRows + 1);
}

TEST(IdleIntervalRowsTest, AppendsAfterAReadAndClearStartsOver) {
  IdleIntervalRows rows(FreshDir("rows_clear"));
  for (uint64_t i = 0; i < 3; ++i) rows.Append(MakeRow(i));
  std::vector<TimeNs> starts;
  ASSERT_TRUE(rows.ForEach([&](const IdleIntervalRow& r) { starts.push_back(r.start_ns); }).ok());
  for (uint64_t i = 3; i < 5; ++i) rows.Append(MakeRow(i));
  starts.clear();
  ASSERT_TRUE(rows.ForEach([&](const IdleIntervalRow& r) { starts.push_back(r.start_ns); }).ok());
  EXPECT_EQ(starts, (std::vector<TimeNs>{-500, 500, 1500, 2500, 3500}));

  rows.Clear();
  EXPECT_EQ(rows.size(), 0u);
  rows.Append(MakeRow(9));
  std::vector<IdleIntervalRow> after;
  ASSERT_TRUE(rows.ForEach([&](const IdleIntervalRow& r) { after.push_back(r); }).ok());
  ASSERT_EQ(after.size(), 1u);
  ExpectSame(after[0], MakeRow(9));
}

TEST(IdleIntervalRowsTest, TheFileLeavesNoNameInItsFolder) {
  const std::string dir = FreshDir("rows_unnamed");
  {
    IdleIntervalRows rows(dir);
    for (uint64_t i = 0; i < 1000; ++i) rows.Append(MakeRow(i));
    ASSERT_TRUE(rows.status().ok()) << rows.status();
    EXPECT_TRUE(fs::is_empty(dir)) << "the rows' file has a name in " << dir;
  }
  EXPECT_TRUE(fs::is_empty(dir));
}

TEST(IdleIntervalRowsTest, NoRowsNoFile) {
  IdleIntervalRows rows(::testing::TempDir() + "/rows_no_such_folder");
  int calls = 0;
  EXPECT_TRUE(rows.ForEach([&](const IdleIntervalRow&) { ++calls; }).ok());
  EXPECT_EQ(calls, 0);
  EXPECT_TRUE(rows.status().ok());  // nothing was created, so nothing failed
}

TEST(IdleIntervalRowsTest, AFolderThatCannotHoldTheFileIsAnError) {
  const std::string dir = ::testing::TempDir() + "/rows_no_such_folder";
  fs::remove_all(dir);
  IdleIntervalRows rows(dir);
  rows.Append(MakeRow(1));
  rows.Append(MakeRow(2));
  EXPECT_EQ(rows.size(), 2u);  // counted, not kept
  ASSERT_FALSE(rows.status().ok());
  EXPECT_NE(rows.status().message().find(dir), std::string::npos) << rows.status();
  int calls = 0;
  const absl::Status read = rows.ForEach([&](const IdleIntervalRow&) { ++calls; });
  EXPECT_EQ(read, rows.status());
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace gs::analyzer
