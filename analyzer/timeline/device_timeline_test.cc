#include "analyzer/timeline/device_timeline.h"

#include "gtest/gtest.h"

namespace gs::analyzer {
namespace {

GpuActivity Act(ActivityKind kind, TimeNs s, TimeNs e, uint32_t stream = 1) {
  GpuActivity a;
  a.kind = kind;
  a.start_ns = s;
  a.end_ns = e;
  a.stream = stream;
  return a;
}

TEST(DeviceTimelineTest, ComputeAndCopyBusyAreSeparateUnions) {
  DeviceTimeline t(1000);
  t.Add(Act(ActivityKind::kKernel, 0, 100, 1));
  t.Add(Act(ActivityKind::kMemcpy, 50, 150, 2));
  t.Add(Act(ActivityKind::kKernel, 60, 80, 3));  // nested, other stream
  EXPECT_EQ(t.busy_ns(), 150);
  EXPECT_EQ(t.compute_busy_ns(), 100);
  EXPECT_EQ(t.copy_busy_ns(), 100);
  EXPECT_EQ(t.kernels(), 2u);
  EXPECT_EQ(t.copies(), 1u);
}

TEST(DeviceTimelineTest, GapAcrossStreamsOnlyWhenNoStreamIsBusy) {
  DeviceTimeline t(1000);
  EXPECT_EQ(t.Add(Act(ActivityKind::kKernel, 0, 100, 1)).length(), 0);
  EXPECT_EQ(t.Add(Act(ActivityKind::kKernel, 90, 200, 2)).length(), 0);
  DeviceTimeline::Gap g = t.Add(Act(ActivityKind::kMemset, 250, 260, 1));
  EXPECT_EQ(g.start, 200);
  EXPECT_EQ(g.end, 250);
}

TEST(DeviceTimelineTest, UtilizationSamplesCountKernelsOnly) {
  DeviceTimeline t(1000);
  t.Add(Act(ActivityKind::kKernel, 0, 500));
  t.Add(Act(ActivityKind::kMemcpy, 500, 1000));
  t.Add(Act(ActivityKind::kKernel, 1000, 2000));
  std::vector<double> s = t.UtilizationSamples(0, 3000);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_DOUBLE_EQ(s[0], 0.5);
  EXPECT_DOUBLE_EQ(s[1], 1.0);
  EXPECT_DOUBLE_EQ(s[2], 0.0);
}

TEST(DeviceTimelineTest, KernelSpanningSamplesIsSplit) {
  DeviceTimeline t(1000);
  t.Add(Act(ActivityKind::kKernel, 500, 1500));
  std::vector<double> s = t.UtilizationSamples(0, 2000);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_DOUBLE_EQ(s[0], 0.5);
  EXPECT_DOUBLE_EQ(s[1], 0.5);
}

}  // namespace
}  // namespace gs::analyzer
