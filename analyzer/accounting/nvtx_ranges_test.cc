// NVTX ranges in the analysis: idle/busy per range and ranges as outer frames of charged stacks,
// on timelines whose right answer is worked out by hand in each test.
#include "analyzer/accounting/nvtx_ranges.h"

#include <string>
#include <vector>

#include "analyzer/result/analysis_builder.h"
#include "analyzer/report/report.h"
#include "analyzer/testing/synthetic_trace.h"
#include "gtest/gtest.h"

namespace gs::analyzer {
namespace {

using testing::MakeNvtxRange;
using testing::SyntheticTrace;
constexpr TimeNs kUs = 1000;
constexpr uint32_t kStep = 1001, kData = 1002, kNccl = 1003, kAllreduce = 1004;


// Thread 1: launch A (kernel 20-1000 µs), host work until 5000 µs in load_batch, launch B
// (kernel 5020-6000 µs). Ranges: "step" 0-6000 µs, "data" 500-5005 µs inside it.
// The gap [1000, 5020) is charged to B's stack (host work, launch overhead, launch latency).
class NvtxAnalysisTest : public ::testing::Test {
 protected:
  NvtxAnalysisTest() {
    t_.tables().SetString(kStep, "step");
    t_.tables().SetString(kData, "data");
    t_.tables().SetString(kNccl, "NCCL");
    t_.tables().SetString(kAllreduce, "allreduce");
    forward_ = t_.Stack({"forward@train.py:20", "main@train.py:50"});
    load_ = t_.Stack({"load_batch@train.py:10", "main@train.py:40"});
    t_.Launch(1, 0, 10 * kUs, 20 * kUs, 1000 * kUs, forward_);
    t_.Launch(1, 5000 * kUs, 5010 * kUs, 5020 * kUs, 6000 * kUs, load_);
    ranges_ = {MakeNvtxRange(1, kStep, 0, 6000 * kUs, 0), MakeNvtxRange(1, kData, 500 * kUs, 5005 * kUs, 1)};
  }

  // Records in file order: NVTX ranges arrive when they close, after the work inside them.
  TraceResult Run(bool expect_nvtx) {
    TraceAnalyzer analyzer(options_, t_.tables());
    if (expect_nvtx) analyzer.ExpectNvtx();
    for (const ApiCall& c : t_.calls()) analyzer.OnApiCall(c);
    for (const GpuActivity& a : t_.activities()) analyzer.OnActivity(a);
    for (const NvtxRange& r : ranges_) analyzer.OnNvtxRange(r);
    return analyzer.Finish(t_.info());
  }
  Analysis Analyze(bool expect_nvtx = true) {
    AnalysisBuilder builder(options_);
    builder.AddTrace(Run(expect_nvtx));
    return builder.Build();
  }
  static const NvtxRangeStats* Find(const Analysis& a, const std::string& name) {
    for (const NvtxRangeStats& r : a.nvtx_ranges)
      if (r.name == name) return &r;
    return nullptr;
  }
  // The idle time of the top stack whose outermost frames are `outer` (outermost last).
  static TimeNs StackIdle(const Analysis& a, const std::string& leaf, const std::vector<std::string>& outer) {
    TimeNs total = 0;
    for (const StackShare& s : a.top_stacks) {
      if (s.frames.empty() || s.frames.front().function != leaf) continue;
      size_t ranges = 0;
      while (ranges < s.frames.size() && s.frames[s.frames.size() - 1 - ranges].module == kNvtxFrameModule) ++ranges;
      if (ranges != outer.size()) continue;
      bool same = true;
      for (size_t i = 0; i < ranges; ++i)
        same &= s.frames[s.frames.size() - ranges + i].function == outer[i];
      if (same) total += s.idle_ns;
    }
    return total;
  }

  AnalysisOptions options_;
  SyntheticTrace t_;
  uint32_t forward_ = 0, load_ = 0;
  std::vector<NvtxRange> ranges_;
};

TEST_F(NvtxAnalysisTest, IdleAndBusyPerRangeCountNestedRangesInEach) {
  const Analysis a = Analyze();
  ASSERT_EQ(a.nvtx_ranges.size(), 2u);
  const NvtxRangeStats* step = Find(a, "step");
  const NvtxRangeStats* data = Find(a, "data");
  ASSERT_NE(step, nullptr);
  ASSERT_NE(data, nullptr);
  // step: 6000 µs, busy 980 + 980 µs.
  EXPECT_EQ(step->count, 1u);
  EXPECT_EQ(step->wall_ns, 6000 * kUs);
  EXPECT_EQ(step->busy_ns, 1960 * kUs);
  EXPECT_EQ(step->idle_ns, 4040 * kUs);
  // data: 4505 µs, busy 500-1000 µs only.
  EXPECT_EQ(data->wall_ns, 4505 * kUs);
  EXPECT_EQ(data->busy_ns, 500 * kUs);
  EXPECT_EQ(data->idle_ns, 4005 * kUs);
  EXPECT_NEAR(data->idle_share, 4005.0 / 4505.0, 1e-9);
  EXPECT_EQ(data->threads, 1u);
  EXPECT_EQ(a.nvtx_ranges.front().name, "step");  // largest idle first
}

TEST_F(NvtxAnalysisTest, RangesBecomeOuterFramesOfTheChargedStacks) {
  const Analysis a = Analyze();
  // The gap [1000, 5020) µs, charged to load_batch: 4005 µs inside data (and step), 15 µs in step.
  EXPECT_EQ(StackIdle(a, "load_batch", {"[nvtx] data", "[nvtx] step"}), 4005 * kUs);
  EXPECT_EQ(StackIdle(a, "load_batch", {"[nvtx] step"}), 15 * kUs);
  EXPECT_EQ(StackIdle(a, "load_batch", {}), 0);
  // Nothing lost or counted twice.
  TimeNs total = 0;
  for (const StackShare& s : a.top_stacks) total += s.idle_ns;
  EXPECT_EQ(total, a.steady_idle_ns);
  // The tree reads step > data > main > load_batch from the root.
  ASSERT_FALSE(a.stack_tree.children.empty());
  const StackTreeNode& root = a.stack_tree.children.front();
  EXPECT_EQ(root.frame.function, "[nvtx] step");
  ASSERT_FALSE(root.children.empty());
  EXPECT_EQ(root.children.front().frame.function, "[nvtx] data");
}

TEST_F(NvtxAnalysisTest, WithoutRangesStacksAreUnchanged) {
  ranges_.clear();
  const Analysis a = Analyze();
  EXPECT_TRUE(a.nvtx_ranges.empty());
  EXPECT_EQ(StackIdle(a, "load_batch", {}), 4020 * kUs);
}

TEST_F(NvtxAnalysisTest, OtherThreadsRangesDoNotTouchThisThreadsStacks) {
  for (NvtxRange& r : ranges_) r.thread = 2;
  const Analysis a = Analyze();
  EXPECT_EQ(StackIdle(a, "load_batch", {}), 4020 * kUs);
  ASSERT_NE(Find(a, "data"), nullptr);
  EXPECT_EQ(Find(a, "data")->idle_ns, 4005 * kUs);  // the GPU was idle all the same
}

TEST_F(NvtxAnalysisTest, DomainsMarksAndOverlappingStartEndRanges) {
  ranges_.push_back(MakeNvtxRange(1, kAllreduce, 900 * kUs, 1100 * kUs, 0, kNccl));
  ranges_.push_back(MakeNvtxRange(1, kData, 3000 * kUs, 3000 * kUs, 0));  // a mark
  const Analysis a = Analyze();
  const NvtxRangeStats* allreduce = Find(a, "allreduce");
  ASSERT_NE(allreduce, nullptr);
  EXPECT_EQ(allreduce->domain, "NCCL");
  EXPECT_EQ(allreduce->busy_ns, 100 * kUs);
  EXPECT_EQ(allreduce->idle_ns, 100 * kUs);
  EXPECT_EQ(Find(a, "data")->count, 1u);  // the mark is not an instance
  // 1000-1100 µs: step > data > allreduce (allreduce started last).
  EXPECT_EQ(StackIdle(a, "load_batch", {"[nvtx NCCL] allreduce", "[nvtx] data", "[nvtx] step"}), 100 * kUs);
  EXPECT_EQ(StackIdle(a, "load_batch", {"[nvtx] data", "[nvtx] step"}), 3905 * kUs);
}

TEST_F(NvtxAnalysisTest, RangesBeforeAndAfterDeviceWorkAreIdle) {
  ranges_.push_back(MakeNvtxRange(1, kStep, 7000 * kUs, 8000 * kUs, 0));
  const Analysis a = Analyze(/*expect_nvtx=*/false);  // enabled by the first range
  const NvtxRangeStats* step = Find(a, "step");
  ASSERT_NE(step, nullptr);
  EXPECT_EQ(step->count, 2u);
  EXPECT_EQ(step->idle_ns, 4040 * kUs + 1000 * kUs);
}

TEST_F(NvtxAnalysisTest, TextAndJsonReportsCarryTheTable) {
  const Analysis a = Analyze();
  ReportOptions o;
  const std::string text = TextReportFormat().Render(a, o);
  EXPECT_NE(text.find("GPU idle per NVTX range"), std::string::npos) << text;
  EXPECT_NE(text.find("step: 67.3% of its 6.00 ms with the GPU idle; data: 88.9%"), std::string::npos) << text;
  const std::string json = JsonReportFormat().Render(a, o);
  EXPECT_NE(json.find("\"nvtx_ranges\""), std::string::npos);
  EXPECT_NE(json.find("\"idle_ns\": 4005000"), std::string::npos) << json;
}

TEST(NvtxMergeTest, SameNameAddsUpAcrossTraces) {
  std::vector<NvtxRangeStats> merged;
  NvtxRangeStats x;
  x.name = "data";
  x.count = 2;
  x.wall_ns = 100;
  x.idle_ns = 80;
  x.busy_ns = 20;
  x.threads = 1;
  NvtxRangeStats y = x;
  y.domain = "NCCL";
  MergeNvtxRanges({x}, &merged);
  MergeNvtxRanges({x, y}, &merged);
  FinalizeNvtxRanges(&merged);
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].name, "data");
  EXPECT_EQ(merged[0].domain, "");
  EXPECT_EQ(merged[0].count, 4u);
  EXPECT_EQ(merged[0].idle_ns, 160);
  EXPECT_DOUBLE_EQ(merged[0].idle_share, 0.8);
  EXPECT_EQ(merged[1].domain, "NCCL");
}

}  // namespace
}  // namespace gs::analyzer
