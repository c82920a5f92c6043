#include "analyzer/report/report.h"

#include "absl/strings/str_split.h"
#include "analyzer/testing/synthetic_trace.h"
#include "gtest/gtest.h"

namespace gs::analyzer {
namespace {

using testing::SyntheticTrace;
constexpr TimeNs kUs = 1'000, kMs = 1'000'000;

size_t Columns(absl::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

Analysis Starved() {
  SyntheticTrace t;
  uint32_t s = t.Stack({"a_function_with_a_rather_long_name_to_force_cutting@some/deep/path/to/a/file.cc:4242",
                        "load_batch@workload.cc:42", "train_step@workload.cc:80", "main@workload.cc:99"});
  TimeNs now = 0;
  for (int i = 0; i < 60; ++i) {
    now += 20 * kMs;
    t.Launch(1, now, now + 5 * kUs, now + 10 * kUs, now + 10 * kMs, s);
    now += 10 * kMs;
  }
  return t.Analyze();
}

TEST(TextReportTest, EveryLineFitsTheWidth) {
  Analysis a = Starved();
  for (int width : {60, 80, 132}) {
    ReportOptions o;
    o.width = width;
    std::string text = TextReportFormat().Render(a, o);
    for (absl::string_view line : absl::StrSplit(text, '\n'))
      EXPECT_LE(Columns(line), static_cast<size_t>(width)) << line;
  }
}

TEST(TextReportTest, DataLossComesFirst) {
  Analysis a = Starved();
  a.losses.cupti_dropped = 12;
  std::string text = TextReportFormat().Render(a, ReportOptions());
  EXPECT_EQ(text.rfind("Data loss: 12 GPU activities dropped by CUPTI", 0), 0u) << text;
  Analysis clean = Starved();
  EXPECT_EQ(TextReportFormat().Render(clean, ReportOptions()).rfind("Data loss: none", 0), 0u);
}

TEST(TextReportTest, ShowsHeartbeatCauseAndStack) {
  ReportOptions o;
  o.width = 120;
  std::string text = TextReportFormat().Render(Starved(), o);
  EXPECT_NE(text.find("GPU-Util every 1/6 s"), std::string::npos);
  EXPECT_NE(text.find("host work"), std::string::npos);
  EXPECT_NE(text.find("load_batch (workload.cc:42)"), std::string::npos) << text;
  EXPECT_NE(text.find("Recommendations"), std::string::npos);
}

// Colour is whole-line ANSI styling laid over the plain report: stripping the escapes gives the
// plain text back, so widths and content never depend on it.
TEST(TextReportTest, ColourIsOnlyAddedWhenAskedAndChangesNothingElse) {
  Analysis a = Starved();
  a.warnings.push_back("a warning");
  ReportOptions plain;
  plain.width = 80;
  const std::string text = TextReportFormat().Render(a, plain);
  EXPECT_EQ(text.find('\033'), std::string::npos);
  ReportOptions colour = plain;
  colour.color = true;
  const std::string styled = TextReportFormat().Render(a, colour);
  EXPECT_NE(styled.find("\033[1m"), std::string::npos) << "section titles are bold";
  EXPECT_NE(styled.find("\033[32mData loss: none\033[0m"), std::string::npos);
  EXPECT_NE(styled.find("\033[33mwarning: a warning\033[0m"), std::string::npos);
  std::string stripped;
  for (size_t i = 0; i < styled.size(); ++i) {
    if (styled[i] == '\033') {
      while (i < styled.size() && styled[i] != 'm') ++i;
      continue;
    }
    stripped.push_back(styled[i]);
  }
  EXPECT_EQ(stripped, text);
}

TEST(ReportRegistryTest, FindsFormatsByName) {
  EXPECT_EQ(FindReportFormat("json"), &JsonReportFormat());
  EXPECT_EQ(FindReportFormat("text"), &TextReportFormat());
  EXPECT_EQ(FindReportFormat("xml"), nullptr);
}

}  // namespace
}  // namespace gs::analyzer
