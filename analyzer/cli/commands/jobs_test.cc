// `gsanalyze report --jobs N`: more threads decode the traces and read a job's traces at once, the
// report stays the same byte for byte — intact, cut and damaged traces, one trace or a job of
// several ranks (merged in input order, whichever trace is read first), the same error when one
// is not a trace.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/analysis/analyze_traces.h"
#include "analyzer/cli/args.h"
#include "analyzer/cli/commands/commands.h"
#include "analyzer/cli/commands/run_command_for_test.h"
#include "analyzer/summary/summarize_trace.h"
#include "analyzer/testing/trace_files.h"
#include "gtest/gtest.h"

namespace gs::analyzer::cli {
namespace {

namespace fs = std::filesystem;

Ran Report(const std::vector<std::string>& argv) { return RunCommand(&RunReport, argv); }

std::vector<std::string> WithJobs(std::vector<std::string> argv, const char* jobs) {
  argv.insert(argv.end(), {"--jobs", jobs});
  return argv;
}

TEST(JobsTest, ReportIsTheSameWhateverTheJobs) {
  const std::string dir = (fs::path(::testing::TempDir()) / "report_jobs").lexically_normal().string();
  fs::remove_all(dir);
  fs::create_directories(dir);
  ASSERT_EQ(testing::WriteStarvedTrace(dir + "/starved.gstrace"), "");
  ASSERT_EQ(testing::WriteHealthyTrace(dir + "/healthy.gstrace"), "");
  ASSERT_EQ(testing::WriteTruncatedTrace(dir + "/cut.gstrace"), "");
  uint64_t events = 0;
  ASSERT_EQ(testing::WriteLargeTrace(dir + "/large.gstrace", 300'000, &events), "");
  {  // the large trace with a run of bytes overwritten in its middle: skipped, and said so
    const std::string damaged = dir + "/damaged.gstrace";
    fs::copy_file(dir + "/large.gstrace", damaged);
    std::fstream f(damaged, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(damaged) / 2));
    f << std::string(300, 'x');
  }
  const std::vector<std::vector<std::string>> inputs = {
      {dir + "/starved.gstrace"}, {dir + "/healthy.gstrace"}, {dir + "/cut.gstrace"},
      {dir + "/large.gstrace"},   {dir + "/damaged.gstrace"},
      {dir + "/starved.gstrace", dir + "/large.gstrace", dir + "/damaged.gstrace"},
      // Read at once, the small traces after the large one are done long before it: merged in the
      // order they were read, the ranks and devices would come out in another order.
      {dir + "/large.gstrace", dir + "/starved.gstrace", dir + "/healthy.gstrace", dir + "/cut.gstrace",
       dir + "/damaged.gstrace"}};
  for (const std::vector<std::string>& traces : inputs) {
    for (const char* format : {"--json", "--format=text"}) {
      std::vector<std::string> argv = {"report", format, "--width", "100"};
      argv.insert(argv.end(), traces.begin(), traces.end());
      const Ran serial = Report(WithJobs(argv, "1"));
      ASSERT_EQ(serial.exit, 0) << serial.err;
      ASSERT_NE(serial.out.find("idle"), std::string::npos) << serial.out;
      for (const char* jobs : {"2", "4"}) {
        const Ran parallel = Report(WithJobs(argv, jobs));
        EXPECT_EQ(parallel.exit, serial.exit);
        EXPECT_EQ(parallel.out, serial.out) << traces.back() << " " << format << " --jobs " << jobs;
        EXPECT_EQ(parallel.err, serial.err);
      }
    }
  }
  // The damage really is there (so the comparison above covered a damaged read).
  const Ran damaged = Report({"report", "--json", dir + "/damaged.gstrace", "--jobs", "2"});
  EXPECT_NE(damaged.out.find("damaged"), std::string::npos);
  // The first trace in input order that is not one is the error, though a later one fails first.
  ASSERT_EQ(testing::WriteNotATrace(dir + "/not_a_trace_1"), "");
  ASSERT_EQ(testing::WriteNewerSchemaTrace(dir + "/newer.gstrace"), "");
  const std::vector<std::string> bad_job = {"report", "--json", dir + "/large.gstrace", dir + "/newer.gstrace",
                                            dir + "/not_a_trace_1", dir + "/starved.gstrace"};
  const Ran serial = Report(WithJobs(bad_job, "1"));
  ASSERT_NE(serial.exit, 0);
  ASSERT_NE(serial.err.find("newer.gstrace"), std::string::npos) << serial.err;
  for (const char* jobs : {"2", "4"}) {
    const Ran parallel = Report(WithJobs(bad_job, jobs));
    EXPECT_EQ(parallel.exit, serial.exit);
    EXPECT_EQ(parallel.out, serial.out);
    EXPECT_EQ(parallel.err, serial.err) << "--jobs " << jobs;
  }
  fs::remove_all(dir);
}

// What `export --tables` writes trace by trace: the rank summaries' rows and stacks, handed over
// in input order with the same contents when the traces are read at once (a fork per trace,
// joined in order).
class TableRowsSeen final : public RankSummaryObserver {
 public:
  TableRowsSeen() : RankSummaryObserver(/*keep_rows=*/true) {}
  std::vector<std::string> seen;

 private:
  void TraceSummarized(size_t index, const RankSummary& s, IdleIntervalRows* rows, TraceStacks* stacks) override {
    std::string line = absl::StrCat(index, " ", s.source, " idle ", s.steady_idle_ns, " in ", s.idle_intervals,
                                     ", ", s.stacks.size(), " stacks:");
    EXPECT_TRUE(rows->ForEach([&line](const IdleIntervalRow& r) {
      absl::StrAppend(&line, " ", r.start_ns, "-", r.end_ns, "/", r.stack_id);
    }).ok());
    for (const auto& [key, frames] : *stacks) absl::StrAppend(&line, " ", key, "=", absl::StrJoin(frames, ";"));
    seen.push_back(std::move(line));
  }
};

TEST(JobsTest, RankSummariesAreTheSameWhateverTheJobs) {
  const std::string dir = (fs::path(::testing::TempDir()) / "summaries_jobs").lexically_normal().string();
  fs::remove_all(dir);
  fs::create_directories(dir);
  uint64_t events = 0;
  ASSERT_EQ(testing::WriteLargeTrace(dir + "/large.gstrace", 100'000, &events), "");
  ASSERT_EQ(testing::WriteStarvedTrace(dir + "/starved.gstrace"), "");
  ASSERT_EQ(testing::WriteTruncatedTrace(dir + "/cut.gstrace"), "");
  const std::vector<std::string> paths = {dir + "/large.gstrace", dir + "/starved.gstrace", dir + "/cut.gstrace"};
  std::vector<std::string> serial;
  for (int jobs : {1, 2, 3}) {
    AnalysisOptions options;
    options.jobs = jobs;
    TableRowsSeen rows;
    AnalyzeHooks hooks;
    hooks.observers = {&rows};
    ASSERT_TRUE(AnalyzeTraces(paths, options, hooks).ok());
    ASSERT_EQ(rows.summaries().size(), paths.size());
    for (size_t i = 0; i < paths.size(); ++i) EXPECT_EQ(rows.summaries()[i].source, paths[i]);
    if (jobs == 1) {
      serial = rows.seen;
      ASSERT_EQ(serial.size(), paths.size());
    } else {
      EXPECT_EQ(rows.seen, serial) << "jobs " << jobs;
    }
  }
  fs::remove_all(dir);
}

TEST(JobsTest, JobsMustBeAThreadCount) {
  EXPECT_EQ(ParseArgs({"report", "t.gstrace", "--jobs", "3"})->jobs, 3);
  EXPECT_EQ(ParseArgs({"report", "t.gstrace", "--jobs=1"})->jobs, 1);
  EXPECT_EQ(ParseArgs({"report", "t.gstrace"})->jobs, 0);  // one per core
  for (const char* bad : {"0", "-2", "x", "1000"}) {
    absl::StatusOr<CliArgs> a = ParseArgs({"report", "t.gstrace", "--jobs", bad});
    ASSERT_FALSE(a.ok()) << bad;
    EXPECT_NE(a.status().message().find("--jobs"), std::string::npos);
  }
  EXPECT_FALSE(ParseArgs({"dump", "t.gstrace", "--jobs", "2"}).ok());
}

}  // namespace
}  // namespace gs::analyzer::cli
