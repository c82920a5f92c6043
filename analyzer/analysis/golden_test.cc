// Golden tests: a small trace built with TraceBuilder in, the expected report out
// (analyzer/testdata/*). After an intended change of the report, regenerate with
//   GS_UPDATE_GOLDEN=1 ctest --test-dir BUILD -R analyzer.GoldenTest
// and review the diff.
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "analyzer/analysis/analyze_traces.h"
#include "analyzer/report/report.h"
#include "analyzer/testing/trace_files.h"
#include "gtest/gtest.h"

namespace gs::analyzer {
namespace {

void CheckGolden(const std::string& actual, const std::string& name) {
  std::string path = std::string(GS_ANALYZER_GOLDEN_DIR) + "/" + name;
  if (std::getenv("GS_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path) << actual;
    return;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing golden file " << path << " (run with GS_UPDATE_GOLDEN=1)";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "report differs from " << path;
}

class GoldenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A relative path, so that the JSON's "path" is the same wherever the build is.
    ASSERT_EQ(testing::WriteStarvedTrace("golden_starved.gstrace", 6), "");
    absl::StatusOr<Analysis> a = AnalyzeTraces({"golden_starved.gstrace"});
    ASSERT_TRUE(a.ok()) << a.status();
    analysis_ = std::move(*a);
  }
  Analysis analysis_;
};

TEST_F(GoldenTest, StarvedText) {
  ReportOptions o;
  o.width = 100;
  CheckGolden(TextReportFormat().Render(analysis_, o), "starved.txt");
}

TEST_F(GoldenTest, StarvedJson) {
  CheckGolden(JsonReportFormat().Render(analysis_, ReportOptions()), "starved.json");
}

}  // namespace
}  // namespace gs::analyzer
