// `gsanalyze html` as a value (ParseArgs) and as a command (RunHtml) on small trace files.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "analyzer/cli/args.h"
#include "analyzer/cli/commands/commands.h"
#include "analyzer/testing/trace_files.h"
#include "gtest/gtest.h"

namespace gs::analyzer::cli {
namespace {

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/gs_html_command_test_" + name;
}

bool Exists(const std::string& path) { return std::ifstream(path).good(); }

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
  CliArgs args;
  args.command = Subcommand::kHtml;
  args.traces = {trace};
  args.html_out = page;
  std::ostringstream out, err;
  EXPECT_EQ(RunHtml(args, out, err), kExitOk) << err.str();
  EXPECT_TRUE(absl::StrContains(out.str(), "wrote " + page)) << out.str();
  std::ifstream f(page);
  std::stringstream text;
  text << f.rdbuf();
  EXPECT_TRUE(absl::StartsWith(text.str(), "<!DOCTYPE html>"));
  EXPECT_TRUE(absl::StrContains(text.str(), "\"load_batch\""));  // the planted function reaches the page
  std::remove(trace.c_str());
  std::remove(page.c_str());
}

TEST(HtmlCommandTest, BadInputExitsTwoAndLeavesNoPage) {
  const std::string trace = TempPath("not_a_trace.txt"), page = TempPath("bad.html");
  ASSERT_EQ(testing::WriteNotATrace(trace), "");
  CliArgs args;
  args.command = Subcommand::kHtml;
  args.traces = {trace};
  args.html_out = page;
  std::ostringstream out, err;
  EXPECT_EQ(RunHtml(args, out, err), kExitBadInput);
  EXPECT_TRUE(absl::StartsWith(err.str(), "gsanalyze: ")) << err.str();
  EXPECT_FALSE(Exists(page));
  std::remove(trace.c_str());
}

}  // namespace
}  // namespace gs::analyzer::cli
