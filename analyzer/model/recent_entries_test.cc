#include "analyzer/model/recent_entries.h"

#include <cstdint>
#include <random>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"

namespace gs::analyzer {
namespace {

using Map = absl::flat_hash_map<uint64_t, int64_t>;

// Sums through the cache land where sums straight into the map land, across the rehashes of a map
// that grows from empty (each insertion may move every entry) and the clears its owner does.
TEST(RecentEntriesTest, SumsThroughTheCacheEqualSumsIntoTheMap) {
  Map through_cache, direct;
  RecentEntries<Map> cache;
  std::mt19937_64 random(7);
  for (int i = 0; i < 200'000; ++i) {
    // Mostly a few hot keys, as consecutive gaps charge; now and then a new one (an insertion).
    const uint64_t key = random() % 8 == 0 ? random() % 5'000 : random() % 6;
    const int64_t ns = static_cast<int64_t>(random() % 1000);
    cache.Get(through_cache, key) += ns;
    direct[key] += ns;
    if (i % 50'000 == 49'999) {
      through_cache.clear();
      cache.Reset();
      direct.clear();
    }
  }
  EXPECT_EQ(through_cache, direct);
}

TEST(RecentEntriesTest, InsertsAMissingKeyValueInitialised) {
  Map map;
  RecentEntries<Map> cache;
  EXPECT_EQ(cache.Get(map, 42), 0);
  cache.Get(map, 42) = 5;
  EXPECT_EQ(map.at(42), 5);
  EXPECT_EQ(map.size(), 1u);
}

}  // namespace
}  // namespace gs::analyzer
