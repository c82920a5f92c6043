// host_memory_map_test.cc
#include "agent/capture/host_memory_map.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace gs {
namespace {

TEST(HostMemoryMapTest, LookupFindsContainingRangeOnly) {
  static HostMemoryMap map;
  map.Clear();
  ASSERT_TRUE(map.Add(0x1000, 0x100, MemKind::kPinned));
  ASSERT_TRUE(map.Add(0x5000, 0x1000, MemKind::kManaged));
  ASSERT_TRUE(map.Add(0x3000, 0x10, MemKind::kPinned));  // out of order insert stays sorted
  EXPECT_EQ(map.Lookup(0x1000), MemKind::kPinned);
  EXPECT_EQ(map.Lookup(0x10ff), MemKind::kPinned);
  EXPECT_EQ(map.Lookup(0x1100), MemKind::kUnknown);  // one past the end
  EXPECT_EQ(map.Lookup(0xfff), MemKind::kUnknown);
  EXPECT_EQ(map.Lookup(0x300f), MemKind::kPinned);
  EXPECT_EQ(map.Lookup(0x5800), MemKind::kManaged);
  EXPECT_EQ(map.size(), 3u);
}

TEST(HostMemoryMapTest, RemoveForgetsOnlyThatRange) {
  static HostMemoryMap map;
  map.Clear();
  map.Add(0x1000, 0x100, MemKind::kPinned);
  map.Add(0x2000, 0x100, MemKind::kPinned);
  EXPECT_TRUE(map.ContainsStart(0x2000));
  EXPECT_FALSE(map.Remove(0x2010));  // not a start
  EXPECT_TRUE(map.Remove(0x2000));
  EXPECT_FALSE(map.ContainsStart(0x2000));
  EXPECT_EQ(map.Lookup(0x2000), MemKind::kUnknown);
  EXPECT_EQ(map.Lookup(0x1000), MemKind::kPinned);
}

TEST(HostMemoryMapTest, FullMapCountsOverflowAndKeepsWorking) {
  static HostMemoryMap map;
  map.Clear();
  for (size_t i = 0; i < HostMemoryMap::kCapacity; ++i) {
    ASSERT_TRUE(map.Add(0x10000 + i * 0x100, 0x80, MemKind::kPinned));
  }
  EXPECT_FALSE(map.Add(0x1, 0x1, MemKind::kPinned));
  EXPECT_EQ(map.overflowed(), 1u);
  EXPECT_EQ(map.Lookup(0x10000 + 77 * 0x100 + 0x7f), MemKind::kPinned);
  EXPECT_EQ(map.Lookup(0x10000 + 77 * 0x100 + 0x80), MemKind::kUnknown);
}

// Readers never see a range that was never added, while a writer keeps adding and removing
// others (the seqlock's job).
TEST(HostMemoryMapTest, ConcurrentReadersSeeStableRangesDuringWrites) {
  static HostMemoryMap map;
  map.Clear();
  map.Add(0x100000, 0x1000, MemKind::kPinned);
  std::atomic<bool> stop{false};
  std::atomic<long> wrong{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        if (map.Lookup(0x100800) != MemKind::kPinned) wrong.fetch_add(1);
        if (map.Lookup(0x50) != MemKind::kUnknown) wrong.fetch_add(1);
      }
    });
  }
  for (int i = 0; i < 20000; ++i) {
    const uint64_t begin = 0x200000 + static_cast<uint64_t>(i % 500) * 0x1000;
    map.Add(begin, 0x800, MemKind::kPinned);
    if (i % 3 == 0) map.Remove(begin);
  }
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace gs
