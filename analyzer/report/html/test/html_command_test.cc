// `gsanalyze html` as a value (ParseArgs) and as a command (RunHtml) on small trace files.
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "analyzer/cli/args.h"
#include "analyzer/cli/commands/commands.h"
#include "analyzer/cli/commands/run_command_for_test.h"
#include "analyzer/summary/summarize_trace.h"
#include "analyzer/summary/summary_file.h"
#include "analyzer/testing/trace_files.h"
#include "gtest/gtest.h"

namespace gs::analyzer::cli {
namespace {

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/gs_html_command_test_" + name;
}

bool Exists(const std::string& path) { return std::ifstream(path).good(); }

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

TEST(HtmlArgsTest, TracesAndOutput) {
  absl::StatusOr<CliArgs> a = ParseArgs({"html", "a.gstrace", "b.gstrace", "-o", "r.html"});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->command, Subcommand::kHtml);
  EXPECT_EQ(a->traces, (std::vector<std::string>{"a.gstrace", "b.gstrace"}));
  EXPECT_EQ(a->html_out, "r.html");
  a = ParseArgs({"html", "--output=r2.html", "a.gstrace"});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->html_out, "r2.html");
}

TEST(HtmlArgsTest, OutputAndTraceAreRequired) {
  EXPECT_FALSE(ParseArgs({"html", "a.gstrace"}).ok());
  EXPECT_FALSE(ParseArgs({"html", "-o", "r.html"}).ok());
  EXPECT_FALSE(ParseArgs({"html", "a.gstrace", "-o"}).ok());
  EXPECT_FALSE(ParseArgs({"html", "a.gstrace", "-o", "r.html", "--json"}).ok());
}

TEST(HtmlCommandTest, WritesOnePageForATrace) {
  const std::string trace = TempPath("starved.gstrace"), page = TempPath("starved.html");
  ASSERT_EQ(testing::WriteStarvedTrace(trace), "");
  const Ran r = RunCommand(&RunHtml, {"html", trace, "-o", page});
  EXPECT_EQ(r.exit, kExitOk) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "wrote " + page)) << r.out;
  const std::string html = ReadFile(page);
  EXPECT_TRUE(absl::StartsWith(html, "<!DOCTYPE html>"));
  EXPECT_TRUE(absl::StrContains(html, "\"load_batch\""));  // the planted function reaches the page
  std::remove(trace.c_str());
  std::remove(page.c_str());
}

TEST(HtmlCommandTest, BadInputExitsTwoAndLeavesNoPage) {
  const std::string trace = TempPath("not_a_trace.txt"), page = TempPath("bad.html");
  ASSERT_EQ(testing::WriteNotATrace(trace), "");
  const Ran r = RunCommand(&RunHtml, {"html", trace, "-o", page});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_TRUE(absl::StartsWith(r.err, "gsanalyze: ")) << r.err;
  EXPECT_FALSE(Exists(page));
  std::remove(trace.c_str());
}

// A job's run folder, as `report` takes it: both ranks' traces, and the page's embedded report has
// the ranks section with a row for each (without --what-if too).
TEST(HtmlCommandTest, AJobsFolderGivesThePageItsRanks) {
  const std::string dir = TempPath("job"), page = TempPath("job.html");
  std::filesystem::remove_all(dir);
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(testing::WriteSizedTrace(dir + "/r0.gstrace", 10, 0), "");
  ASSERT_EQ(testing::WriteSizedTrace(dir + "/r1.gstrace", 10, 1), "");
  const Ran r = RunCommand(&RunHtml, {"html", dir, "-o", page});
  ASSERT_EQ(r.exit, kExitOk) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "wrote " + page)) << r.out;
  const std::string html = ReadFile(page);
  const size_t ranks = html.find("\"ranks\": {");
  ASSERT_NE(ranks, std::string::npos) << "no ranks section in the embedded report";
  const size_t rows = html.find("\"rows\": [", ranks);
  ASSERT_NE(rows, std::string::npos);
  EXPECT_NE(html.find("\"rank\": 0,", rows), std::string::npos);
  EXPECT_NE(html.find("\"rank\": 1,", rows), std::string::npos);
  EXPECT_TRUE(absl::StrContains(html, "gpustall report: 2 traces"));
  std::filesystem::remove_all(dir);
  std::remove(page.c_str());
}

// A folder with no trace in it: one line naming it, exit 2, no page.
TEST(HtmlCommandTest, AFolderWithoutTracesIsBadInput) {
  const std::string dir = TempPath("empty_job"), page = TempPath("empty_job.html");
  std::filesystem::remove_all(dir);
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  const Ran r = RunCommand(&RunHtml, {"html", dir, "-o", page});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_TRUE(absl::StartsWith(r.err, "gsanalyze: ")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, dir)) << r.err;
  EXPECT_FALSE(Exists(page));
  std::filesystem::remove_all(dir);
}

// A summary names no timeline to draw: one line naming it and saying what to give instead, exit 2,
// no page.
TEST(HtmlCommandTest, ASummaryIsRefusedWithOneLine) {
  const std::string trace = TempPath("summarized.gstrace"), summary = TempPath("r0.gssummary"),
                    page = TempPath("summary.html");
  ASSERT_EQ(testing::WriteSizedTrace(trace, 10, 0), "");
  absl::StatusOr<RankSummary> s = SummarizeTrace(trace);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE(WriteRankSummary(*s, summary).ok());
  const Ran r = RunCommand(&RunHtml, {"html", trace, summary, "-o", page});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_EQ(r.err, "gsanalyze: " + summary +
                           " is a summary (gsanalyze summarize): the page draws the traces themselves; give the "
                           "traces, or use `gsanalyze report` for the summaries\n");
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(Exists(page));
  std::remove(trace.c_str());
  std::remove(summary.c_str());
}

}  // namespace
}  // namespace gs::analyzer::cli
