// recent_entries.h — a few recently used entries of a hash map, kept by pointer in front of it.
//
// The analysis sums each idle gap's charges into maps keyed by stack (attribute/attribution.h,
// summary/summarize_trace.h). Consecutive gaps charge the same few keys in turn (a step's gaps
// resume on different calls, host work and launch overhead have keys of their own), so a one-entry
// cache missed on nearly every gap and each miss paid a hash lookup; four entries catch them.
//
// A pointer into an absl::flat_hash_map stays valid until that map's next insertion (or clear):
// Get empties the cache whenever its own lookup inserted, and whoever inserts into or clears the
// map by other means calls Reset. Not thread-safe (as the maps it fronts).
#ifndef GPUSTALL_ANALYZER_MODEL_RECENT_ENTRIES_H_
#define GPUSTALL_ANALYZER_MODEL_RECENT_ENTRIES_H_

#include <array>
#include <cstddef>
#include <cstdint>

namespace gs::analyzer {

template <typename Map>
class RecentEntries {
 public:
  // map[key], inserted value-initialised when missing.
  typename Map::mapped_type& Get(Map& map, uint64_t key) {
    for (int i = 0; i < kSize; ++i)
      if (value_[i] != nullptr && key_[i] == key) return *value_[i];
    const size_t before = map.size();
    typename Map::mapped_type* v = &map[key];
    if (map.size() != before) Reset();
    next_ = (next_ + 1) % kSize;
    key_[next_] = key;
    value_[next_] = v;
    return *v;
  }

  // Forgets every entry: call after inserting into or clearing the map other than through Get.
  void Reset() { value_.fill(nullptr); }

 private:
  static constexpr int kSize = 4;
  std::array<uint64_t, kSize> key_{};
  std::array<typename Map::mapped_type*, kSize> value_{};
  int next_ = 0;
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_MODEL_RECENT_ENTRIES_H_
