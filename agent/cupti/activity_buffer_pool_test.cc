// activity_buffer_pool_test.cc
#include "agent/cupti/activity_buffer_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>

namespace gs {
namespace {

TEST(ActivityBufferPoolTest, HandsOutDistinctAlignedBuffersUntilEmpty) {
  ActivityBufferPool pool;
  ASSERT_TRUE(pool.Init(4, 4096));
  std::set<uint8_t*> seen;
  for (int i = 0; i < 4; ++i) {
    uint8_t* b = pool.Acquire();
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % ActivityBufferPool::kAlignment, 0u);
    EXPECT_TRUE(seen.insert(b).second);
  }
  EXPECT_EQ(pool.Acquire(), nullptr);  // bounded: CUPTI then drops and counts
  EXPECT_EQ(pool.exhausted(), 1u);
  EXPECT_EQ(pool.in_use(), 4);
  pool.Release(*seen.begin());
  EXPECT_EQ(pool.Acquire(), *seen.begin());
}

TEST(ActivityBufferPoolTest, ForeignPointersAreIgnored) {
  ActivityBufferPool pool;
  ASSERT_TRUE(pool.Init(2, 4096));
  uint8_t* a = pool.Acquire();
  uint8_t local[16];
  pool.Release(local);
  pool.Release(a + 8);  // not a buffer start
  EXPECT_EQ(pool.in_use(), 1);
  pool.Release(a);
  EXPECT_EQ(pool.in_use(), 0);
}

TEST(ActivityBufferPoolTest, RejectsBadSizes) {
  ActivityBufferPool pool;
  EXPECT_FALSE(pool.Init(0, 4096));
  EXPECT_FALSE(pool.Init(ActivityBufferPool::kMaxBuffers + 1, 4096));
  EXPECT_EQ(pool.Acquire(), nullptr);
}

}  // namespace
}  // namespace gs
