// AnalyzeTraces on files written with TraceBuilder: the known answer of the starved loop, and
// what bad input does.
#include "analyzer/analysis/analyze_traces.h"

#include <unistd.h>

#include "analyzer/testing/trace_files.h"
#include "gtest/gtest.h"

namespace gs::analyzer {
namespace {

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/analyzer_" + std::to_string(getpid()) + "_" + name;
}

double Share(const Analysis& a, Cause c) { return a.causes[static_cast<int>(c)].share; }

TEST(AnalyzeTracesTest, StarvedLoopIsHostBoundInLoadBatchAfterSync) {
  std::string path = TempPath("starved.gstrace");
  ASSERT_EQ(testing::WriteStarvedTrace(path, 12), "");
  absl::StatusOr<Analysis> a = AnalyzeTraces({path});
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->devices.size(), 1u);
  EXPECT_EQ(a->devices[0].name, "Simulated GPU");
  EXPECT_FALSE(a->losses.Any());
  // Per step: 30 ms host work + 2 ms staging the pageable copy while the GPU idles, 6 ms kernels.
  EXPECT_GT(Share(*a, Cause::kHostWork), 0.9);
  EXPECT_GT(Share(*a, Cause::kPageableCopy), 0.05);
  EXPECT_NEAR(a->SteadyUtilization(), 6.0 / 38.0, 0.01);
  EXPECT_EQ(a->intervals.after_sync_count, 11u);
  ASSERT_FALSE(a->intervals.after_sync_sites.empty());
  EXPECT_EQ(a->intervals.after_sync_sites[0].frame.function, "read_loss");
  ASSERT_FALSE(a->top_stacks.empty());
  bool has_load_batch = false;
  for (const FrameInfo& f : a->top_stacks[0].frames) has_load_batch |= f.function == "load_batch";
  EXPECT_TRUE(has_load_batch);
  EXPECT_GT(a->top_stacks[0].share, 0.9);
  ASSERT_FALSE(a->recommendations.empty());
  EXPECT_EQ(a->recommendations[0].kind, "input_pipeline");
  EXPECT_EQ(a->memory.allocations, 1u);
  EXPECT_EQ(a->memory.peak_bytes, 256u << 20);
  unlink(path.c_str());
}

TEST(AnalyzeTracesTest, HealthyTraceHasNoRecommendation) {
  std::string path = TempPath("healthy.gstrace");
  ASSERT_EQ(testing::WriteHealthyTrace(path), "");
  absl::StatusOr<Analysis> a = AnalyzeTraces({path});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_GT(a->SteadyUtilization(), 0.95);
  EXPECT_TRUE(a->recommendations.empty());
  unlink(path.c_str());
}

TEST(AnalyzeTracesTest, TruncatedTraceIsAnalysedWithAWarning) {
  std::string path = TempPath("truncated.gstrace");
  ASSERT_EQ(testing::WriteTruncatedTrace(path), "");
  absl::StatusOr<Analysis> a = AnalyzeTraces({path});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_GT(a->losses.truncated_bytes, 0u);
  ASSERT_EQ(a->warnings.size(), 1u);
  EXPECT_NE(a->warnings[0].find("cut"), std::string::npos) << a->warnings[0];
  EXPECT_GT(a->intervals.count, 3u);
  unlink(path.c_str());
}

TEST(AnalyzeTracesTest, BadInputIsAnErrorNamingTheFile) {
  std::string text = TempPath("text.txt"), newer = TempPath("newer.gstrace");
  ASSERT_EQ(testing::WriteNotATrace(text), "");
  ASSERT_EQ(testing::WriteNewerSchemaTrace(newer), "");
  absl::StatusOr<Analysis> a = AnalyzeTraces({text});
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find(text), std::string::npos) << a.status();
  absl::StatusOr<Analysis> b = AnalyzeTraces({newer});
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find(newer), std::string::npos) << b.status();
  EXPECT_FALSE(AnalyzeTraces({TempPath("missing")}).ok());
  unlink(text.c_str());
  unlink(newer.c_str());
}

TEST(AnalyzeTracesTest, SeveralTracesListTheirDevicesApart) {
  std::string p1 = TempPath("r0.gstrace"), p2 = TempPath("r1.gstrace");
  ASSERT_EQ(testing::WriteStarvedTrace(p1, 4), "");
  ASSERT_EQ(testing::WriteHealthyTrace(p2, 10), "");
  absl::StatusOr<Analysis> a = AnalyzeTraces({p1, p2});
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->devices.size(), 2u);
  EXPECT_EQ(a->devices[0].trace, 0u);
  EXPECT_EQ(a->devices[1].trace, 1u);
  EXPECT_LT(a->devices[0].steady_utilization, 0.3);
  EXPECT_GT(a->devices[1].steady_utilization, 0.95);
  unlink(p1.c_str());
  unlink(p2.c_str());
}

}  // namespace
}  // namespace gs::analyzer
