// A job folder read by `gsanalyze report DIR`: what gsanalyze itself wrote there (a `report --json`,
// an `export --kineto/--chrome` of one of the folder's traces) is left out by its content, and
// said so in one line; each rank is counted once.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/cli/args.h"
#include "analyzer/cli/commands/commands.h"
#include "analyzer/cli/commands/run_command_for_test.h"
#include "analyzer/testing/trace_files.h"
#include "gtest/gtest.h"

namespace gs::analyzer::cli {
namespace {

namespace fs = std::filesystem;

Ran Gsanalyze(int (*command)(const CliArgs&, std::ostream&, std::ostream&), const std::vector<std::string>& argv) {
  return RunCommand(command, argv);
}

class JobFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    job_ = TestCaseFolder("job_folder.");
    ASSERT_EQ(testing::WriteStarvedTrace(job_ + "/r0.gstrace", 6), "");
    ASSERT_EQ(testing::WriteStarvedTrace(job_ + "/r1.gstrace", 7), "");
  }
  void TearDown() override { fs::remove_all(job_); }
  std::string job_;
};

// The report of the folder, written into it, then the Kineto and Chrome exports of its traces:
// the folder still reads as its two ranks.
TEST_F(JobFolderTest, WhatGsanalyzeWroteThereIsLeftOutAndSaidSo) {
  Ran json = Gsanalyze(&RunReport, {"report", "--json", job_});
  ASSERT_EQ(json.exit, kExitOk) << json.err;
  std::ofstream(job_ + "/report.json") << json.out;
  ASSERT_EQ(Gsanalyze(&RunExport, {"export", "--kineto", job_ + "/r0.json", job_ + "/r0.gstrace"}).exit, kExitOk);
  ASSERT_EQ(Gsanalyze(&RunExport, {"export", "--chrome", job_ + "/r1.chrome.json", job_ + "/r1.gstrace"}).exit,
            kExitOk);

  Ran r = Gsanalyze(&RunReport, {"report", "--width", "100", job_});
  EXPECT_EQ(r.exit, kExitOk) << r.err;
  EXPECT_NE(r.err.find("gsanalyze: skipped 3 files in " + job_ +
                       ": r0.json (exported by gsanalyze from r0.gstrace), r1.chrome.json (exported by gsanalyze "
                       "from r1.gstrace), report.json (a gsanalyze report)\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("Ranks (2 ranks"), std::string::npos) << r.out;
  // The tables export takes a job folder the same way.
  Ran tables = Gsanalyze(&RunExportTables, {"export", "--tables", job_ + "/tables", job_});
  EXPECT_EQ(tables.exit, kExitOk) << tables.err;
  EXPECT_NE(tables.out.find(", 2 ranks, 0 kernel configurations ->"), std::string::npos) << tables.out;
  EXPECT_NE(tables.err.find("gsanalyze: skipped 3 files in "), std::string::npos) << tables.err;
}

// `gsanalyze report --json DIR > DIR/report.json`: the shell has made the file, empty, when the
// report looks into the folder.
TEST_F(JobFolderTest, TheReportBeingWrittenIntoTheFolderIsLeftOut) {
  std::ofstream(job_ + "/report.json").flush();
  Ran r = Gsanalyze(&RunReport, {"report", "--json", job_});
  EXPECT_EQ(r.exit, kExitOk) << r.err;
  EXPECT_EQ(r.err, "gsanalyze: skipped 1 file in " + job_ + ": report.json (empty)\n");
  EXPECT_NE(r.out.find("r1.gstrace"), std::string::npos) << r.out;
}

// An export is left out only beside its own source: alone in a folder it is that rank's trace.
TEST_F(JobFolderTest, AnExportWithoutItsSourceIsARank) {
  const std::string other = job_ + "/other";
  fs::create_directories(other);
  ASSERT_EQ(Gsanalyze(&RunExport, {"export", "--kineto", other + "/r0.json", job_ + "/r0.gstrace"}).exit, kExitOk);
  Ran r = Gsanalyze(&RunReport, {"report", "--json", other});
  EXPECT_EQ(r.exit, kExitOk) << r.err;
  EXPECT_EQ(r.err.find("skipped"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("r0.json"), std::string::npos) << r.out;
}

// Named on the command line, a report is not a trace (exit 2, one line naming it); a folder holding
// nothing but what gsanalyze wrote has no trace either, and the error says what was left out.
TEST_F(JobFolderTest, AReportIsNotATrace) {
  Ran json = Gsanalyze(&RunReport, {"report", "--json", job_ + "/r0.gstrace"});
  ASSERT_EQ(json.exit, kExitOk) << json.err;
  const std::string only = job_ + "/only_report";
  fs::create_directories(only);
  std::ofstream(only + "/report.json") << json.out;
  Ran named = Gsanalyze(&RunReport, {"report", only + "/report.json"});
  EXPECT_EQ(named.exit, kExitBadInput);
  EXPECT_NE(named.err.find("report.json: "), std::string::npos) << named.err;
  Ran folder = Gsanalyze(&RunReport, {"report", only});
  EXPECT_EQ(folder.exit, kExitBadInput);
  EXPECT_NE(folder.err.find(only + ": no .gstrace, PyTorch profiler or summary files in it (skipped 1 file in " +
                            only + ": report.json (a gsanalyze report))"),
            std::string::npos)
      << folder.err;
}

}  // namespace
}  // namespace gs::analyzer::cli
