// fuzz.regression.*: the inputs the fuzzers once crashed on (tests/fuzz/regressions/) and the
// checked-in seeds (tests/fuzz/corpus/: traces; corpus/kineto/: PyTorch profiler JSON), replayed
// through the fuzzers' own entry functions in the normal build. A crash, a sanitizer report or a
// hang here is a regression.
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "proto/testing/trace_builder.h"
#include "tests/fuzz/fuzz_entry.h"

namespace gs::fuzz {
namespace {

std::vector<std::string> FilesIn(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.empty() || name[0] == '.' || name == "README.md" || e->d_type == DT_DIR) continue;
      out.push_back(dir + "/" + name);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(Replay, EveryRegressionInputIsHandled) {
  // Each file is an input that once crashed (or hung) a fuzzer; surviving it is the assertion.
  for (const std::string& path : FilesIn(GS_FUZZ_REGRESSION_DIR)) {
    SCOPED_TRACE(path);
    const std::string input = Contents(path);
    ReadEveryRecord(input);
    AnalyzeAndReport(input);
  }
}

TEST(Replay, SeedTracesReadAndAnalyseInBothInputModes) {
  const std::vector<std::string> seeds = FilesIn(GS_FUZZ_CORPUS_DIR);
  ASSERT_FALSE(seeds.empty()) << "no seed traces in " << GS_FUZZ_CORPUS_DIR;
  for (const std::string& path : seeds) {
    SCOPED_TRACE(path);
    const std::string trace = Contents(path);
    const uint64_t records = ReadEveryRecord(trace);
    EXPECT_GT(records, 0u);
    EXPECT_GT(AnalyzeAndReport(trace), 0u);
    // The structured mode reproduces the same records (checksums recomputed by the harness).
    const std::string frames = TraceToFuzzInput(trace);
    ASSERT_FALSE(frames.empty());
    EXPECT_EQ(ReadEveryRecord(frames), records);
  }
}

// gs_fuzz_kineto's seeds (make_kineto_seeds.py cuts them from the importer's test traces): each is
// still a trace with GPU work, so the fuzzer starts from inputs the importer takes all the way
// through the analysis, not from ones it refuses at the first byte.
TEST(Replay, KinetoSeedsAreTracesWithGpuWork) {
  const std::vector<std::string> seeds = FilesIn(std::string(GS_FUZZ_CORPUS_DIR) + "/kineto");
  ASSERT_GE(seeds.size(), 5u) << "seeds missing from " << GS_FUZZ_CORPUS_DIR << "/kineto";
  for (const std::string& path : seeds) {
    SCOPED_TRACE(path);
    const std::string json = Contents(path);
    EXPECT_LE(json.size(), 16u << 10) << "a seed is a few KB: the fuzzer mutates every byte";
    const size_t reports = ImportKinetoAndReport(json);
    EXPECT_GT(reports, 0u);
    // Cut anywhere, a seed is refused or read as far as it goes, never a crash.
    for (size_t cut = 1; cut < json.size(); cut += 97) ImportKinetoAndReport(json.substr(0, cut));
  }
  // Not a trace: refused.
  EXPECT_EQ(ImportKinetoAndReport(""), 0u);
  EXPECT_EQ(ImportKinetoAndReport("{\"schemaVersion\": 1}"), 0u);
}

TEST(Replay, NonTraceInputsAreRefusedQuietly) {
  EXPECT_EQ(ReadEveryRecord(""), 0u);
  EXPECT_EQ(ReadEveryRecord("\x89GSTRACE"), 0u);  // magic, then nothing
  EXPECT_EQ(AnalyzeAndReport(std::string("\x89GSTRACE\x07\0\0\0\0\0\0\0", 16)), 0u);  // newer format
  // A structured input with only a header: a valid, empty trace.
  EXPECT_EQ(ReadEveryRecord("no frames"), 0u);
  EXPECT_GT(AnalyzeAndReport("no frames"), 0u);
}

// A trace whose records claim absurd times (a flipped high bit in a timestamp column): the
// analysis must not size anything by the time span (its utilisation bins are per 1/6 s).
std::string HostileTimesTrace(uint64_t start_ns, uint64_t end_ns) {
  const std::string path = ::testing::TempDir() + "/hostile_times_" + std::to_string(start_ns) + ".gstrace";
  gpustall::trace::TraceHeader header;
  auto b = trace::testing::TraceBuilder::Create(path, header);
  EXPECT_NE(b, nullptr);
  const uint32_t launch = b->InternApiFunction("cudaLaunchKernel", gpustall::trace::API_CLASS_LAUNCH);
  trace::ApiCallRecord c;
  c.thread_id = 1;
  c.function = launch;
  c.correlation_id = 1;
  c.enter_ns = 1000;
  c.exit_ns = 2000;
  b->AddApiCall(c);
  trace::GpuActivityRecord ok, bad;
  ok.start_ns = 3000;
  ok.end_ns = 5000;
  ok.kind = gpustall::trace::ACTIVITY_KIND_KERNEL;
  ok.correlation_id = 1;
  b->AddActivity(ok);
  bad = ok;
  bad.start_ns = start_ns;
  bad.end_ns = end_ns;
  b->AddActivity(bad);
  EXPECT_TRUE(b->Finish());
  std::string bytes = Contents(path);
  unlink(path.c_str());  // the test keeps the bytes, not the file
  return bytes;
}

TEST(Replay, AbsurdTimestampsDoNotSizeTheAnalysis) {
  // 2^62 ns is 146 years: one bin per 1/6 s would be 2.8e10 bins.
  EXPECT_GT(AnalyzeAndReport(HostileTimesTrace(6000, uint64_t{1} << 62)), 0u);
  EXPECT_GT(AnalyzeAndReport(HostileTimesTrace(uint64_t{1} << 62, (uint64_t{1} << 62) + 10)), 0u);
  EXPECT_GT(AnalyzeAndReport(HostileTimesTrace(~uint64_t{0} - 10, ~uint64_t{0})), 0u);
}

}  // namespace
}  // namespace gs::fuzz
