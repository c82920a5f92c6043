// activity_buffer.h — GPU activity records on their way from the capture side to the writer.
//
// GPU records arrive off the application's hot path (CUPTI's buffer-completed callback, the
// fallback poller), in bursts of thousands, so a mutex-protected pair of preallocated vectors is
// enough: producers append to one while the writer processes the other (swapped under the lock,
// so steady state allocates nothing). Kernel names are copied once per distinct name into a name
// table that only grows (distinct names are few).
//
// Bound: at most `capacity` records wait at a time; beyond that records are dropped and counted.
//
// Thread safety: Add and the counters from any thread; TakeAll/NameAt from the writer thread.
#ifndef GPUSTALL_AGENT_RECORD_ACTIVITY_BUFFER_H_
#define GPUSTALL_AGENT_RECORD_ACTIVITY_BUFFER_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "agent/record/events.h"

namespace gs {

struct PendingActivity {
  GpuActivityEvent activity;  // activity.name is NOT valid here: use name_index
  uint32_t name_index;   // 0 = no name; else 1 + index into the name table
};

class ActivityBuffer {
 public:
  // Reserves room for `capacity` waiting records (twice: one vector per side).
  void Init(size_t capacity);

  // Copies `activity` (and its name). Drops and counts when `capacity` records are waiting.
  void Add(const GpuActivityEvent& activity) { Add(&activity, 1); }
  // The same for `count` records, under one lock.
  void Add(const GpuActivityEvent* activities, size_t count);

  // Writer: swaps the waiting records into `*out` (cleared first; its capacity is reused).
  void TakeAll(std::vector<PendingActivity>* out);
  // Writer: the name with the given name_index (1-based), copied.
  std::string NameAt(uint32_t name_index);

  // Graph nodes (capture time): kept beside the activities, at most `capacity` waiting.
  void AddGraphNode(const GraphNodeEvent& node);
  void TakeGraphNodes(std::vector<GraphNodeEvent>* out);

  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  uint64_t added() const { return added_.load(std::memory_order_relaxed); }
  size_t capacity() const { return capacity_; }

 private:
  static constexpr size_t kMaxNameBytes = 4096;
  static constexpr size_t kRecentNames = 8;
  struct RecentName {
    const char* name = nullptr;  // CUPTI's pointer
    uint32_t index = 0;          // its name_index
  };
  // The name_index of `name` (copied into the table at its first sighting). Under mu_.
  uint32_t NameIndex(const char* name);

  std::mutex mu_;
  std::vector<PendingActivity> waiting_;  // guarded by mu_
  std::unordered_map<std::string, uint32_t> name_index_;  // guarded by mu_
  std::vector<std::string> names_;  // guarded by mu_
  std::string scratch_;             // guarded by mu_
  RecentName recent_names_[kRecentNames];  // guarded by mu_; the last few names by pointer
  size_t next_recent_name_ = 0;            // guarded by mu_
  std::vector<GraphNodeEvent> graph_nodes_;  // guarded by mu_
  size_t capacity_ = 0;
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> added_{0};
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_RECORD_ACTIVITY_BUFFER_H_
