// `gsanalyze report --jobs N`: more threads decode the traces, the report stays the same byte for
// byte — intact, cut and damaged traces, one trace or a job of several ranks.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/cli/args.h"
#include "analyzer/cli/commands/commands.h"
#include "analyzer/testing/trace_files.h"
#include "gtest/gtest.h"

namespace gs::analyzer::cli {
namespace {

namespace fs = std::filesystem;

struct Ran {
  int exit;
  std::string out, err;
};

Ran Report(const std::vector<std::string>& argv) {
  absl::StatusOr<CliArgs> args = ParseArgs(argv);
  EXPECT_TRUE(args.ok()) << args.status();
  if (!args.ok()) return {-1, "", ""};
  std::ostringstream out, err;
  const int exit = RunReport(*args, out, err);
  return {exit, out.str(), err.str()};
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
      {dir + "/starved.gstrace", dir + "/large.gstrace", dir + "/damaged.gstrace"}};
  for (const std::vector<std::string>& traces : inputs) {
    for (const char* format : {"--json", "--format=text"}) {
      std::vector<std::string> argv = {"report", format, "--width", "100"};
      argv.insert(argv.end(), traces.begin(), traces.end());
      std::vector<std::string> one = argv;
      one.insert(one.end(), {"--jobs", "1"});
      const Ran serial = Report(one);
      ASSERT_EQ(serial.exit, 0) << serial.err;
      ASSERT_NE(serial.out.find("idle"), std::string::npos) << serial.out;
      for (const char* jobs : {"2", "4"}) {
        std::vector<std::string> many = argv;
        many.insert(many.end(), {"--jobs", jobs});
        const Ran parallel = Report(many);
        EXPECT_EQ(parallel.exit, serial.exit);
        EXPECT_EQ(parallel.out, serial.out) << traces.back() << " " << format << " --jobs " << jobs;
        EXPECT_EQ(parallel.err, serial.err);
      }
    }
  }
  // The damage really is there (so the comparison above covered a damaged read).
  const Ran damaged = Report({"report", "--json", dir + "/damaged.gstrace", "--jobs", "2"});
  EXPECT_NE(damaged.out.find("damaged"), std::string::npos);
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
