// The command line of the multi-rank subcommands, as values (ParseArgs), and their exit codes.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "analyzer/cli/args.h"
#include "analyzer/cli/commands/commands.h"
#include "gtest/gtest.h"

namespace gs::analyzer::cli {
namespace {

TEST(MultiRankCliTest, SummarizeTakesOneTraceAndAnOutput) {
  absl::StatusOr<CliArgs> a = ParseArgs({"summarize", "t.gstrace", "-o", "t.gssummary"});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->command, Subcommand::kSummarize);
  EXPECT_EQ(a->traces, std::vector<std::string>{"t.gstrace"});
  EXPECT_EQ(a->summary_out, "t.gssummary");
  EXPECT_EQ(ParseArgs({"summarize", "t", "--output=s"})->summary_out, "s");
  EXPECT_FALSE(ParseArgs({"summarize", "t.gstrace"}).ok());
  EXPECT_FALSE(ParseArgs({"summarize", "a", "b", "-o", "s"}).ok());
}

TEST(MultiRankCliTest, ExportTablesTakesSeveralInputsAndGoesAlone) {
  absl::StatusOr<CliArgs> a = ParseArgs({"export", "--tables", "out", "a.gstrace", "run/"});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->command, Subcommand::kExport);
  EXPECT_EQ(a->tables_dir, "out");
  EXPECT_EQ(a->traces.size(), 2u);
  EXPECT_FALSE(ParseArgs({"export", "--tables", "out"}).ok());
  EXPECT_FALSE(ParseArgs({"export", "--tables", "out", "--chrome", "c.json", "a"}).ok());
  EXPECT_FALSE(ParseArgs({"report", "--tables", "out", "a"}).ok());
}

TEST(MultiRankCliTest, BadInputsExitTwoWithOneLine) {
  std::string not_a_trace = ::testing::TempDir() + "/multirank_not_a_trace.txt";
  std::ofstream(not_a_trace) << "hello\n";
  std::ostringstream out, err;
  CliArgs summarize = *ParseArgs({"summarize", not_a_trace, "-o", not_a_trace + ".s"});
  EXPECT_EQ(RunSummarize(summarize, out, err), kExitBadInput);
  EXPECT_NE(err.str().find("gsanalyze: "), std::string::npos);
  err.str("");
  CliArgs report = *ParseArgs({"report", ::testing::TempDir() + "/no_such_dir_or_file"});
  EXPECT_EQ(RunReport(report, out, err), kExitBadInput);
  EXPECT_NE(err.str().find("no_such_dir_or_file"), std::string::npos);
  std::remove(not_a_trace.c_str());
}

}  // namespace
}  // namespace gs::analyzer::cli
