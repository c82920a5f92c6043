// Each subcommand reads each trace once: the one pass (analysis/analyze_traces.h) feeds the
// analysis and every view registered on it. The reader's open observer counts the files opened
// (every trace file the pass opens, whatever its format, goes through TraceReader::OpenFile).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/cli/args.h"
#include "analyzer/cli/commands/commands.h"
#include "analyzer/reader/trace_reader.h"
#include "analyzer/testing/trace_files.h"
#include "gtest/gtest.h"

namespace gs::analyzer::cli {
namespace {

std::map<std::string, int>* g_opened = nullptr;

void CountOpen(const std::string& path) { ++(*g_opened)[path]; }

class OnePassTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // ctest runs the cases in parallel processes: each case writes files of its own.
    dir_ = ::testing::TempDir() + "/" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (int rank = 0; rank < 4; ++rank) {
      std::string path = dir_ + ".rank" + std::to_string(rank) + ".gstrace";
      ASSERT_EQ(testing::WriteStarvedTrace(path, 6 + rank), "");
      traces_.push_back(path);
    }
    g_opened = &opened_;
    reader::TraceReader::set_open_observer(&CountOpen);
  }
  void TearDown() override {
    reader::TraceReader::set_open_observer(nullptr);
    g_opened = nullptr;
    for (const std::string& t : traces_) std::remove(t.c_str());
  }
  // Runs gsanalyze with `argv` (the traces appended) and expects exit 0.
  void Run(int (*command)(const CliArgs&, std::ostream&, std::ostream&), std::vector<std::string> argv,
           const std::vector<std::string>& traces) {
    argv.insert(argv.end(), traces.begin(), traces.end());
    absl::StatusOr<CliArgs> args = ParseArgs(argv);
    ASSERT_TRUE(args.ok()) << args.status();
    std::ostringstream out, err;
    EXPECT_EQ(command(*args, out, err), kExitOk) << err.str();
    out_ = out.str();
  }
  void ExpectEachReadOnce(const std::vector<std::string>& traces) {
    EXPECT_EQ(opened_.size(), traces.size());
    for (const std::string& t : traces) EXPECT_EQ(opened_[t], 1) << t;
  }

  std::string dir_;  // prefix of this case's files
  std::vector<std::string> traces_;
  std::map<std::string, int> opened_;
  std::string out_;
};

TEST_F(OnePassTest, MultiRankReportReadsEachTraceOnce) {
  Run(&RunReport, {"report", "--width", "100"}, traces_);
  EXPECT_NE(out_.find("Ranks (4 ranks"), std::string::npos) << out_;
  ExpectEachReadOnce(traces_);
}

TEST_F(OnePassTest, MultiRankJsonReportReadsEachTraceOnce) {
  Run(&RunReport, {"report", "--json"}, traces_);
  EXPECT_NE(out_.find("\"ranks\""), std::string::npos);
  ExpectEachReadOnce(traces_);
}

TEST_F(OnePassTest, TablesExportReadsEachTraceOnce) {
  Run(&RunExportTables, {"export", "--tables", dir_ + ".tables"}, traces_);
  ExpectEachReadOnce(traces_);
}

TEST_F(OnePassTest, HtmlReportReadsEachTraceOnce) {
  const std::string page = dir_ + ".html";
  Run(&RunHtml, {"html", "-o", page}, traces_);
  ExpectEachReadOnce(traces_);
  std::remove(page.c_str());
}

TEST_F(OnePassTest, ChromeAndKinetoExportsReadTheTraceOnceEach) {
  const std::string chrome = dir_ + ".chrome.json";
  Run(&RunExport, {"export", "--chrome", chrome}, {traces_[0]});
  ExpectEachReadOnce({traces_[0]});
  opened_.clear();
  const std::string kineto = dir_ + ".kineto.json";
  Run(&RunExport, {"export", "--kineto", kineto}, {traces_[0]});
  ExpectEachReadOnce({traces_[0]});
  std::remove(chrome.c_str());
  std::remove(kineto.c_str());
}

TEST_F(OnePassTest, SummarizeReadsTheTraceOnce) {
  const std::string summary = dir_ + ".gssummary";
  Run(&RunSummarize, {"summarize", traces_[0], "-o", summary}, {});
  ExpectEachReadOnce({traces_[0]});
  std::remove(summary.c_str());
}

// A PyTorch profiler (Kineto) JSON trace is chosen by content on the same one open, alone and
// beside .gstrace files, by every subcommand that reads traces.
TEST_F(OnePassTest, KinetoJsonIsReadOnceByEverySubcommand) {
  const std::string kineto = std::string(GS_KINETO_TESTDATA) + "/a100_triton.json.gz";
  const std::string chrome = dir_ + ".chrome.json", kineto_out = dir_ + ".kineto.json";
  const std::string summary = dir_ + ".gssummary", page = dir_ + ".html";
  struct Case {
    int (*command)(const CliArgs&, std::ostream&, std::ostream&);
    std::vector<std::string> argv, traces;
    const char* expect;  // in the output
  };
  const Case cases[] = {
      {&RunReport, {"report", "--width", "100"}, {traces_[0], kineto}, "2 traces"},
      {&RunReport, {"report", "--json"}, {kineto}, "\"traces\""},
      {&RunExport, {"export", "--chrome", chrome}, {kineto}, "idle intervals"},
      {&RunExport, {"export", "--kineto", kineto_out}, {kineto}, "idle intervals"},
      {&RunSummarize, {"summarize", "-o", summary}, {kineto}, ""},
      {&RunHtml, {"html", "-o", page}, {kineto}, ""},
      {&RunExportTables, {"export", "--tables", dir_ + ".tables"}, {traces_[1], kineto}, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.argv[0] + " " + c.argv[1]);
    opened_.clear();
    Run(c.command, c.argv, c.traces);
    EXPECT_NE(out_.find(c.expect), std::string::npos) << out_;
    ExpectEachReadOnce(c.traces);
  }
  for (const std::string& f : {chrome, kineto_out, summary, page}) std::remove(f.c_str());
}

// A job folder's PyTorch profiler traces are taken by name (*.json, *.json.gz) and read once by the
// pass; its other files (a simulator's truth-r0.jsonl) are not opened as traces.
TEST_F(OnePassTest, FolderTakesKinetoJsonByNameAndReadsItOnce) {
  const std::string job = dir_ + ".job";
  std::filesystem::create_directories(job);
  std::filesystem::copy_file(traces_[0], job + "/rank0.gstrace", std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(std::string(GS_KINETO_TESTDATA) + "/a100_triton.json.gz", job + "/rank1.json.gz",
                             std::filesystem::copy_options::overwrite_existing);
  std::ofstream(job + "/truth-r0.jsonl", std::ios::binary) << "{\"step\": 1}\n{\"step\": 2}\n";
  Run(&RunReport, {"report", "--width", "100"}, {job});
  EXPECT_NE(out_.find("2 traces"), std::string::npos) << out_;
  ExpectEachReadOnce({job + "/rank0.gstrace", job + "/rank1.json.gz"});
  std::filesystem::remove_all(job);
}

}  // namespace
}  // namespace gs::analyzer::cli
