#include "analyzer/report/html/timeline.h"

#include <numeric>

#include "analyzer/result/analysis_builder.h"
#include "analyzer/analysis/trace_analyzer.h"
#include "analyzer/json/json_value.h"
#include "analyzer/report/html/test/record_pass.h"
#include "analyzer/testing/synthetic_trace.h"
#include "gtest/gtest.h"

namespace gs::analyzer::html {
namespace {

using testing::SyntheticTrace;

int64_t Sum(const std::vector<int64_t>& v) { return std::accumulate(v.begin(), v.end(), int64_t{0}); }

TEST(BucketGridTest, SpanIsSplitAcrossTheBucketsItOverlaps) {
  BucketGrid grid(8);
  std::vector<int64_t>* s = grid.NewSeries();
  grid.AddSpan(s, 0, 8 * 1024);  // fits the first grid exactly: 1024 ns per bucket
  EXPECT_EQ(grid.width(), 1024);
  for (int64_t v : *s) EXPECT_EQ(v, 1024);
  grid.AddSpan(s, 1000, 1100);
  EXPECT_EQ((*s)[0], 1024 + 24);
  EXPECT_EQ((*s)[1], 1024 + 76);
}

TEST(BucketGridTest, GrowingEitherWayKeepsEveryNanosecondInTheRightBucket) {
  BucketGrid grid(16);
  std::vector<int64_t>* s = grid.NewSeries();
  struct Span { TimeNs a, b; };
  std::vector<Span> spans = {{5'000, 6'000}, {900'000, 950'000}, {-300'000, -299'000}, {40'000'000, 40'000'010}};
  for (const Span& sp : spans) grid.AddSpan(s, sp.a, sp.b);
  TimeNs total = 0;
  for (const Span& sp : spans) total += sp.b - sp.a;
  EXPECT_EQ(Sum(*s), total);
  // Each span's time sits in the buckets that cover it now.
  for (const Span& sp : spans) {
    ASSERT_GE(sp.a, grid.origin());
    ASSERT_LE(sp.b, grid.origin() + grid.width() * static_cast<TimeNs>(grid.size()));
    size_t b = static_cast<size_t>((sp.a - grid.origin()) / grid.width());
    EXPECT_GT((*s)[b], 0) << "span at " << sp.a;
  }
  // Series made after growth are as wide as the grid.
  EXPECT_EQ(grid.NewSeries()->size(), 16u);
}

// A training-loop shape: per step a copy then two kernels, with host work between steps.
SyntheticTrace Steps(int steps) {
  SyntheticTrace t;
  uint32_t stack = t.Stack({"load_batch@loader.py:10", "train_step", "main"});
  TimeNs now = 1'000'000;
  for (int i = 0; i < steps; ++i) {
    t.Launch(1, now, now + 5'000, now + 10'000, now + 210'000, stack);
    t.Launch(1, now + 6'000, now + 9'000, now + 215'000, now + 415'000, stack, 0, 8);
    now += 1'000'000;  // ~585 µs of host work per step
  }
  return t;
}

struct Recorded {
  Analysis analysis;
  Json timeline;
  size_t lanes = 0;
};

Recorded Record(SyntheticTrace& t, const TimelineOptions& options) {
  Timeline timeline(options);
  Recorded r;
  r.analysis = RecordPass(t, &timeline, {});
  absl::StatusOr<Json> parsed = Json::Parse(timeline.ToJson());
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  if (parsed.ok()) r.timeline = *parsed;
  r.lanes = timeline.lanes();
  return r;
}

const Json* FindLane(const Json& timeline, const std::string& kind, int index = 0) {
  for (const Json& l : timeline["lanes"].items())
    if (l["kind"].as_string() == kind && index-- == 0) return &l;
  return nullptr;
}

TEST(TimelineRecorderTest, DeviceLaneHoldsTheAnalysisIdleIntervals) {
  SyntheticTrace t = Steps(20);
  Recorded r = Record(t, TimelineOptions());
  ASSERT_EQ(r.analysis.devices.size(), 1u);
  ASSERT_TRUE(r.timeline["exact"].as_bool());
  // One device, its two streams, one thread.
  EXPECT_EQ(r.lanes, 4u);
  ASSERT_EQ(r.timeline["lanes"].size(), 4u);
  const Json* device = FindLane(r.timeline, "device");
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(static_cast<uint64_t>((*device)["segments"].as_int()), r.analysis.intervals.count);
  // The exact idle segments add up to the analysis' steady-state idle.
  const std::vector<Json>& exact = (*device)["exact"].items();
  ASSERT_EQ(exact.size(), 3 * r.analysis.intervals.count);
  TimeNs idle = 0;
  for (size_t i = 1; i < exact.size(); i += 3) idle += exact[i].as_int();
  EXPECT_EQ(idle, r.analysis.steady_idle_ns);
  // Bucket busy (per-mille of a bucket) matches the device's busy time to within rounding.
  const TimeNs width = r.timeline["width"].as_int();
  int64_t permille = 0;
  for (const Json& v : (*device)["busy"].items()) permille += v.as_int();
  const double busy = static_cast<double>(permille) * static_cast<double>(width) / 1000;
  const double want = static_cast<double>(r.analysis.devices[0].steady_wall_ns - r.analysis.devices[0].steady_idle_ns);
  EXPECT_NEAR(busy, want, want * 0.02 + static_cast<double>(width) * 2);
  EXPECT_FALSE(device->Has("underfilled")) << "no launch configurations, no fill";
}

// Busy is not full: on a 4-SM device a kernel of B blocks covers min(1, B/4) of it, and the device
// lane's under-filled series holds, per bucket, ∫ (1 − min(1, Σ coverage)) dt while kernels run.
TEST(TimelineRecorderTest, DeviceLaneHoldsTheUnderFilledBusyTime) {
  SyntheticTrace t;
  t.AddDevice(0, 4);
  const uint32_t quarter = t.Config(1, 128), half = t.Config(2, 128), three = t.Config(3, 128), full = t.Config(8, 128);
  t.Kernel(1024, 3072, 0, 7).launch_config = quarter;
  t.Kernel(2048, 4096, 0, 8).launch_config = half;
  t.Kernel(5120, 6144, 0, 7).launch_config = full;
  t.Kernel(6144, 7168, 0, 7).launch_config = half;
  t.Kernel(6144, 7168, 0, 8).launch_config = three;  // with the half: 1.25, a full device
  TimelineOptions options;
  options.buckets = 8;  // 1024 ns each from 1024 on: one bucket per microsecond above
  Recorded r = Record(t, options);
  ASSERT_EQ(r.timeline["width"].as_int(), 1024);
  ASSERT_EQ(r.timeline["origin"].as_int(), 1024);
  const Json* device = FindLane(r.timeline, "device");
  ASSERT_NE(device, nullptr);
  ASSERT_TRUE(device->Has("underfilled"));
  // [1024, 2048): 1/4 covered, 768 ns empty; [2048, 3072): 1/4 + 1/2, 256 ns; [3072, 4096): 1/2,
  // 512 ns; [4096, 5120) idle; the full kernel, then the two that fill the device together: 0.
  std::vector<int64_t> permille;
  for (const Json& v : (*device)["underfilled"].items()) permille.push_back(v.as_int());
  EXPECT_EQ(permille, (std::vector<int64_t>{750, 250, 500, 0, 0, 0, 0, 0}));
  EXPECT_EQ((*device)["underfilled_ns"].as_int(), 768 + 256 + 512);
  // The kernels' busy time less the time the report's SM coverage counts: 5120 − 3584 ns.
  ASSERT_EQ(r.analysis.devices.size(), 1u);
  const DeviceSummary& d = r.analysis.devices[0];
  ASSERT_TRUE(d.has_fill);
  EXPECT_EQ(d.compute_busy_ns, 5120);
  EXPECT_EQ(d.sm_coverage_busy_ns, 3584);
  EXPECT_EQ((*device)["underfilled_ns"].as_int(), d.compute_busy_ns - d.sm_coverage_busy_ns);
}

TEST(TimelineRecorderTest, OverTheExactBudgetEveryLaneFallsBackToBuckets) {
  TimelineOptions options;
  options.max_exact_segments = 10;
  SyntheticTrace t = Steps(50);
  Recorded r = Record(t, options);
  EXPECT_FALSE(r.timeline["exact"].as_bool());
  const Json* stream = FindLane(r.timeline, "stream");
  ASSERT_NE(stream, nullptr);
  EXPECT_FALSE(stream->Has("exact"));
  EXPECT_EQ((*stream)["segments"].as_int(), 50);  // still counted
  // 50 kernels of 200 µs each on this stream, as bucket per-mille.
  int64_t permille = 0;
  for (const Json& v : (*stream)["busy"].items()) permille += v.as_int();
  const double busy = static_cast<double>(permille) * static_cast<double>(r.timeline["width"].as_int()) / 1000;
  EXPECT_NEAR(busy, 50 * 200'000.0, 50 * 200'000.0 * 0.05);
}

TEST(TimelineRecorderTest, SamplesBecomeThreadStateSeries) {
  SyntheticTrace t = Steps(2);
  InMemoryTables tables;
  AnalysisOptions analysis_options;
  Timeline timeline;
  TraceAnalyzer analyzer(analysis_options, tables);
  TimelineRecorder recorder(&timeline, 0, tables, &analyzer);
  for (const ApiCall& c : t.calls()) recorder.OnApiCall(c);
  for (int i = 0; i < 10; ++i) recorder.OnSample(Sample{1'000'000 + i * 100'000, 1, 0, i < 7 ? uint8_t{1} : uint8_t{4}});
  absl::StatusOr<Json> j = Json::Parse(timeline.ToJson());
  ASSERT_TRUE(j.ok());
  const Json* thread = FindLane(*j, "thread");
  ASSERT_NE(thread, nullptr);
  const Json& states = (*thread)["states"];
  int64_t cpu = 0, io = 0;
  for (const Json& v : states["cpu"].items()) cpu += v.as_int();
  for (const Json& v : states["io_wait"].items()) io += v.as_int();
  EXPECT_EQ(cpu, 7);
  EXPECT_EQ(io, 3);
}

// Counts what reaches the analysis behind the recorder.
struct CountingSink : RecordSink {
  int calls = 0, activities = 0, samples = 0, memory = 0, ranges = 0;
  void OnApiCall(const ApiCall&) override { ++calls; }
  void OnActivity(const GpuActivity&) override { ++activities; }
  void OnSample(const Sample&) override { ++samples; }
  void OnMemoryEvent(const MemoryEvent&) override { ++memory; }
  void OnNvtxRange(const NvtxRange&) override { ++ranges; }
};

TEST(TimelineRecorderTest, ForwardsEveryRecordAndDrawsOutermostNvtxRanges) {
  InMemoryTables tables;
  tables.SetString(5, "step");
  Timeline timeline;
  CountingSink sink;
  TimelineRecorder recorder(&timeline, 0, tables, &sink);
  recorder.OnApiCall(ApiCall{});
  recorder.OnActivity(GpuActivity{});
  recorder.OnSample(Sample{});
  recorder.OnMemoryEvent(MemoryEvent{});
  NvtxRange outer{1'000, 9'000, 1, 5, 0, 0, 0, 0};
  NvtxRange inner{2'000, 3'000, 1, 5, 0, 0, 0, 1};
  recorder.OnNvtxRange(inner);
  recorder.OnNvtxRange(outer);
  EXPECT_EQ(sink.calls + sink.activities + sink.samples + sink.memory + sink.ranges, 6);
  EXPECT_EQ(sink.ranges, 2);
  absl::StatusOr<Json> j = Json::Parse(timeline.ToJson());
  ASSERT_TRUE(j.ok());
  const Json* nvtx = FindLane(*j, "nvtx");
  ASSERT_NE(nvtx, nullptr);
  EXPECT_EQ((*nvtx)["segments"].as_int(), 1);
  const std::vector<Json>& exact = (*nvtx)["exact"].items();
  ASSERT_EQ(exact.size(), 3u);
  EXPECT_EQ(exact[1].as_int(), 8'000);
  EXPECT_EQ((*j)["names"].items()[exact[2].as_int()].as_string(), "step");
}

}  // namespace
}  // namespace gs::analyzer::html
