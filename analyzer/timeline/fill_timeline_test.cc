#include "analyzer/timeline/fill_timeline.h"

#include <gtest/gtest.h>

#include <vector>

namespace gs::analyzer {
namespace {

TEST(FillTimelineTest, OneKernelFillsItsCoverageForItsDuration) {
  FillTimeline f;
  f.Add(1000, 1100, 0.25, 0.125);
  EXPECT_EQ(f.coverage_ns(), 25);
  EXPECT_EQ(f.occupancy_ns(), 13);  // 12.5 rounds away from zero
  EXPECT_EQ(f.kernels(), 1u);
}

TEST(FillTimelineTest, ConcurrentKernelsAddUpToAFullDevice) {
  FillTimeline f;
  f.Add(0, 100, 0.5, 0.2);
  f.Add(50, 150, 0.7, 0.9);
  // [0,50) 0.5; [50,100) min(1, 1.2) = 1; [100,150) 0.7.
  EXPECT_EQ(f.coverage_ns(), 25 + 50 + 35);
  // [0,50) 0.2; [50,100) min(1, 1.1); [100,150) 0.9.
  EXPECT_EQ(f.occupancy_ns(), 10 + 50 + 45);
}

TEST(FillTimelineTest, IdleTimeBetweenKernelsFillsNothing) {
  FillTimeline f;
  f.Add(0, 10, 1.0, 1.0);
  f.Add(20, 30, 0.5, -1);  // occupancy unknown: counts 0
  f.Add(30, 40, 0.1, 0.3);
  EXPECT_EQ(f.coverage_ns(), 10 + 5 + 1);
  EXPECT_EQ(f.occupancy_ns(), 10 + 0 + 3);
}

TEST(FillTimelineTest, ALateKernelCountsFromTheLastStartOn) {
  FillTimeline f;
  f.Add(100, 200, 1.0, 1.0);
  f.Add(50, 150, 1.0, 1.0);  // past the sort window: [100,150) only, where the device is full anyway
  EXPECT_EQ(f.coverage_ns(), 100);
  f.Add(300, 300, 1.0, 1.0);  // empty: nothing
  EXPECT_EQ(f.coverage_ns(), 100);
  EXPECT_EQ(f.kernels(), 2u);
}

TEST(FillTimelineTest, ManyKernelsEndingInAnyOrder) {
  FillTimeline f;
  // Ten kernels starting every 10 ns, each 100 ns long, coverage 0.1: from 90 to 100 all ten run.
  for (int i = 0; i < 10; ++i) f.Add(i * 10, i * 10 + 100, 0.1, 0.05);
  // ∫ = Σ duration × coverage when the sum never exceeds 1: 10 × 100 × 0.1.
  EXPECT_EQ(f.coverage_ns(), 100);
  EXPECT_EQ(f.occupancy_ns(), 50);
}

// The pieces are the integrals' terms: each stretch where the same kernels ran, in time order,
// none where nothing ran, and they sum to coverage_ns() and occupancy_ns().
TEST(FillTimelineTest, PiecesAreTheStretchesTheIntegralsSum) {
  std::vector<FillPiece> pieces;
  FillTimeline f;
  f.set_piece_observer([&](const FillPiece& p) { pieces.push_back(p); });
  f.Add(0, 100, 0.5, 0.2);
  f.Add(50, 150, 0.7, 0.9);
  f.Add(200, 220, 0.25, -1);  // after 50 ns with nothing running: no piece for the gap
  EXPECT_EQ(f.coverage_ns(), 25 + 50 + 35 + 5);
  ASSERT_EQ(pieces.size(), 4u);
  const struct {
    TimeNs start, end;
    double coverage, occupancy;
  } want[] = {{0, 50, 0.5, 0.2}, {50, 100, 1.0, 1.0}, {100, 150, 0.7, 0.9}, {200, 220, 0.25, 0.0}};
  double covered = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    EXPECT_EQ(pieces[i].start, want[i].start) << i;
    EXPECT_EQ(pieces[i].end, want[i].end) << i;
    EXPECT_NEAR(pieces[i].coverage, want[i].coverage, 1e-12) << i;
    EXPECT_NEAR(pieces[i].occupancy, want[i].occupancy, 1e-12) << i;
    covered += static_cast<double>(pieces[i].end - pieces[i].start) * pieces[i].coverage;
  }
  EXPECT_NEAR(covered, 115, 1e-9);
  f.occupancy_ns();  // already integrated: nothing more
  EXPECT_EQ(pieces.size(), 4u);
}

}  // namespace
}  // namespace gs::analyzer
