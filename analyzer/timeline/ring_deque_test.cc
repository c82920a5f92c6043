#include "analyzer/timeline/ring_deque.h"

#include "gtest/gtest.h"

namespace gs::analyzer {
namespace {

TEST(RingDequeTest, GrowsAcrossTheWrapAndKeepsOrder) {
  RingDeque<int> d;
  for (int i = 0; i < 10; ++i) d.push_back(i);
  for (int i = 0; i < 7; ++i) d.pop_front();  // head moves: the next pushes wrap
  for (int i = 10; i < 100; ++i) d.push_back(i);
  ASSERT_EQ(d.size(), 93u);
  for (size_t i = 0; i < d.size(); ++i) EXPECT_EQ(d[i], static_cast<int>(i) + 7);
  EXPECT_EQ(d.front(), 7);
  EXPECT_EQ(d.back(), 99);
}

TEST(RingDequeTest, InsertSortedPlacesALateValue) {
  RingDeque<int> d;
  for (int v : {1, 3, 5, 7}) d.push_back(v);
  d.insert_sorted(4, [](int a, int b) { return a < b; });
  ASSERT_EQ(d.size(), 5u);
  EXPECT_EQ(d[2], 4);
  EXPECT_EQ(d[3], 5);
}

}  // namespace
}  // namespace gs::analyzer
