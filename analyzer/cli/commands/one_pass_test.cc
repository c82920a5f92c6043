// Each subcommand reads each trace once: the job's intake (cli/job_inputs.h) and the one pass
// (analysis/analyze_traces.h) share one open of each file, and every view registered on the pass
// is fed from it. The count is the kernel's: inotify reports every open of a file in a watched
// folder, by any code in the process (std::ifstream, zlib, a raw open), so an extra look at a file
// shows however it is done. inotify folds an event into the one before it when both are the same,
// so reads and closes are watched too: they separate one open from the next (a look at a file
// reads it, and closes it or keeps it open).
#include <sys/inotify.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
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

// Opens for reading of the files in the folders watched, by path, from Start() to Stop().
class OpenCounter {
 public:
  OpenCounter() : fd_(inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {}
  ~OpenCounter() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return fd_ >= 0; }
  void Watch(const std::string& dir) {
    const int wd = inotify_add_watch(fd_, dir.c_str(), IN_OPEN | IN_ACCESS | IN_CLOSE_NOWRITE | IN_CLOSE_WRITE);
    ASSERT_GE(wd, 0) << dir;
    dirs_[wd] = dir;
  }
  void Start() { Drain(nullptr); }  // what the test's own setup opened does not count
  // Files opened and not written: an output the command writes is opened too, for writing.
  std::map<std::string, int> Stop() {
    std::map<std::string, int> opens, writes, read;
    Drain(&opens, &writes);
    for (const auto& [path, n] : opens) {
      if (n - writes[path] > 0) read[path] = n - writes[path];
    }
    return read;
  }

 private:
  void Drain(std::map<std::string, int>* opens, std::map<std::string, int>* writes = nullptr) {
    alignas(inotify_event) char buf[1 << 16];
    ssize_t n;
    while ((n = read(fd_, buf, sizeof buf)) > 0) {
      for (char* p = buf; p < buf + n;) {
        const auto* e = reinterpret_cast<const inotify_event*>(p);
        p += sizeof(inotify_event) + e->len;
        EXPECT_FALSE(e->mask & IN_Q_OVERFLOW) << "inotify dropped events: the count is short";
        if (opens == nullptr || (e->mask & IN_ISDIR) || e->len == 0) continue;
        const std::string path = (fs::path(dirs_[e->wd]) / e->name).lexically_normal().string();
        if (e->mask & IN_OPEN) ++(*opens)[path];
        if ((e->mask & IN_CLOSE_WRITE) && writes != nullptr) ++(*writes)[path];
      }
    }
  }
  int fd_;
  std::map<int, std::string> dirs_;
};

class OnePassTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(counter_.ok()) << "inotify_init1 failed";
    dir_ = TestCaseFolder("one_pass.");
    for (int rank = 0; rank < 4; ++rank) {
      std::string path = dir_ + "/rank" + std::to_string(rank) + ".gstrace";
      ASSERT_EQ(testing::WriteStarvedTrace(path, 6 + rank), "");
      traces_.push_back(path);
    }
    // The test data's PyTorch profiler trace, copied here so that its opens are counted.
    kineto_ = dir_ + "/a100_triton.json.gz";
    fs::copy_file(std::string(GS_KINETO_TESTDATA) + "/a100_triton.json.gz", kineto_);
    counter_.Watch(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // Runs gsanalyze with `argv` (the traces appended) and expects exit 0; counts the opens.
  void Run(int (*command)(const CliArgs&, std::ostream&, std::ostream&), std::vector<std::string> argv,
           const std::vector<std::string>& traces) {
    argv.insert(argv.end(), traces.begin(), traces.end());
    absl::StatusOr<CliArgs> args = ParseArgs(argv);
    ASSERT_TRUE(args.ok()) << args.status();
    std::ostringstream out, err;
    counter_.Start();
    EXPECT_EQ(command(*args, out, err), kExitOk) << err.str();
    opened_ = counter_.Stop();
    out_ = out.str();
  }
  // Exactly `traces` were opened for reading, each once.
  void ExpectEachReadOnce(const std::vector<std::string>& traces) {
    std::map<std::string, int> want;
    for (const std::string& t : traces) want[fs::path(t).lexically_normal().string()] = 1;
    EXPECT_EQ(opened_, want);
  }

  OpenCounter counter_;
  std::string dir_;  // this case's folder
  std::vector<std::string> traces_;
  std::string kineto_;
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
  Run(&RunExportTables, {"export", "--tables", dir_ + "/out.tables"}, traces_);
  ExpectEachReadOnce(traces_);
}

TEST_F(OnePassTest, HtmlReportReadsEachTraceOnce) {
  const std::string page = dir_ + "/out.html";
  Run(&RunHtml, {"html", "-o", page}, traces_);
  ExpectEachReadOnce(traces_);
  std::remove(page.c_str());
}

TEST_F(OnePassTest, ChromeAndKinetoExportsReadTheTraceOnceEach) {
  const std::string chrome = dir_ + "/out.chrome.json";
  Run(&RunExport, {"export", "--chrome", chrome}, {traces_[0]});
  ExpectEachReadOnce({traces_[0]});
  opened_.clear();
  const std::string kineto = dir_ + "/out.kineto.json";
  Run(&RunExport, {"export", "--kineto", kineto}, {traces_[0]});
  ExpectEachReadOnce({traces_[0]});
  std::remove(chrome.c_str());
  std::remove(kineto.c_str());
}

TEST_F(OnePassTest, SummarizeReadsTheTraceOnce) {
  const std::string summary = dir_ + "/out.gssummary";
  Run(&RunSummarize, {"summarize", traces_[0], "-o", summary}, {});
  ExpectEachReadOnce({traces_[0]});
  std::remove(summary.c_str());
}

// A PyTorch profiler (Kineto) JSON trace is chosen by content on the same one open, alone and
// beside .gstrace files, by every subcommand that reads traces.
TEST_F(OnePassTest, KinetoJsonIsReadOnceByEverySubcommand) {
  const std::string kineto = kineto_;
  const std::string chrome = dir_ + "/out.chrome.json", kineto_out = dir_ + "/out.kineto.json";
  const std::string summary = dir_ + "/out.gssummary", page = dir_ + "/out.html";
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
      {&RunExportTables, {"export", "--tables", dir_ + "/out.tables"}, {traces_[1], kineto}, ""},
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
// pass; its other files (a simulator's truth-r0.jsonl) are looked into once (a summary is known by
// its first bytes, whatever its name), not read as traces.
TEST_F(OnePassTest, FolderTakesKinetoJsonByNameAndReadsItOnce) {
  const std::string job = dir_ + "/job";
  fs::create_directories(job);
  fs::copy_file(traces_[0], job + "/rank0.gstrace");
  fs::copy_file(kineto_, job + "/rank1.json.gz");
  std::ofstream(job + "/truth-r0.jsonl", std::ios::binary) << "{\"step\": 1}\n{\"step\": 2}\n";
  counter_.Watch(job);
  Run(&RunReport, {"report", "--width", "100"}, {job});
  EXPECT_NE(out_.find("2 traces"), std::string::npos) << out_;
  EXPECT_EQ(opened_[job + "/truth-r0.jsonl"], 1);
  opened_.erase(job + "/truth-r0.jsonl");
  ExpectEachReadOnce({job + "/rank0.gstrace", job + "/rank1.json.gz"});
}

}  // namespace
}  // namespace gs::analyzer::cli
