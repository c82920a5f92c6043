#include "analyzer/timeline/interval_union.h"

#include "gtest/gtest.h"

namespace gs::analyzer {
namespace {

TEST(IntervalUnionTest, OverlapsCountOnce) {
  IntervalUnion u;
  EXPECT_EQ(u.Add(0, 10), 0);
  EXPECT_EQ(u.Add(5, 15), 0);
  EXPECT_EQ(u.covered(), 15);
  EXPECT_EQ(u.frontier(), 15);
}

TEST(IntervalUnionTest, NestedIntervalAddsNothing) {
  IntervalUnion u;
  u.Add(0, 100);
  EXPECT_EQ(u.Add(10, 20), 0);
  EXPECT_EQ(u.covered(), 100);
  EXPECT_EQ(u.frontier(), 100);
}

TEST(IntervalUnionTest, GapIsReportedAsItsLength) {
  IntervalUnion u;
  u.Add(0, 10);
  EXPECT_EQ(u.Add(25, 30), 15);
  EXPECT_EQ(u.covered(), 15);
}

TEST(IntervalUnionTest, ZeroLengthMovesFrontierButAddsNoTime) {
  IntervalUnion u;
  u.Add(0, 10);
  EXPECT_EQ(u.Add(20, 20), 10);
  EXPECT_EQ(u.Add(30, 40), 10);
  EXPECT_EQ(u.covered(), 20);
}

TEST(IntervalUnionTest, InvertedIntervalIsZeroLength) {
  IntervalUnion u;
  u.Add(0, 10);
  u.Add(12, 5);
  EXPECT_EQ(u.covered(), 10);
  EXPECT_EQ(u.frontier(), 12);
}

TEST(IntervalUnionTest, NewPieceCallbackSeesOnlyUncoveredPart) {
  IntervalUnion u;
  std::vector<std::pair<TimeNs, TimeNs>> pieces;
  auto cb = [&](TimeNs a, TimeNs b) { pieces.emplace_back(a, b); };
  u.Add(0, 10, cb);
  u.Add(5, 15, cb);
  u.Add(6, 8, cb);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[1], std::make_pair(TimeNs{10}, TimeNs{15}));
}

}  // namespace
}  // namespace gs::analyzer
