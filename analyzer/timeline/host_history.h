// host_history.h — the recent host-side past the gap classifier looks at: each thread's API calls,
// samples and recorded waits (blocking libc calls) in time order, the outstanding calls by
// correlation id, and the last cudaStreamWaitEvent per stream.
//
// Bounded: calls and samples older than the prune point (the earliest device frontier, i.e. the
// start of any gap still to be classified) are forgotten, keeping one call before it (the
// "preceding call" of a gap that starts there) and one sample (it stands for time after it);
// waits that ended before both the prune point and the first sample kept (which may lie inside
// one) likewise; correlation entries live in a fixed ring.
//
// Thread safety: none.
#ifndef GPUSTALL_ANALYZER_TIMELINE_HOST_HISTORY_H_
#define GPUSTALL_ANALYZER_TIMELINE_HOST_HISTORY_H_

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/timeline/ring_deque.h"
#include "analyzer/model/types.h"

namespace gs::analyzer {

struct ThreadHistory {
  RingDeque<ApiCall> calls;     // ordered by enter_ns
  RingDeque<Sample> samples;    // ordered by time_ns
  RingDeque<HostWait> waits;    // ordered by start_ns
};

class HostHistory {
 public:
  HostHistory(uint32_t correlation_slots_log2, size_t max_calls_per_thread);

  // Records a call (any order; kept sorted per thread by enter time).
  void AddCall(const ApiCall& call);
  void AddSample(const Sample& sample);
  void AddWait(const HostWait& wait);

  // The call with this correlation id, if still remembered; nullptr otherwise. The pointer is
  // valid until the next AddCall.
  const ApiCall* FindCorrelated(uint32_t correlation) const;

  // nullptr if the thread has no remembered calls.
  const ThreadHistory* Thread(uint64_t tid) const;

  // Latest cudaStreamWaitEvent on `stream` entered at or before `t`: its enter time, or -1.
  TimeNs LastStreamWaitBefore(uint64_t stream, TimeNs t) const;

  // Forgets what no future gap can need: per thread, calls that exited before `t` except the
  // last of them, samples before `t` except the last of them (it stands for time after it), and
  // waits that ended before `t` and before that sample (which says whether the sample was taken
  // inside one).
  void PruneBefore(TimeNs t);
  // The same for one thread (cheap enough to call after every gap).
  void PruneThreadBefore(uint64_t tid, TimeNs t);

  uint64_t folded_calls() const { return folded_; }
  // Calls, samples and waits held over all threads (what the bound is about).
  size_t retained() const;
  // The thread's history, created if new. Valid until a new thread is added.
  ThreadHistory& MutableThread(uint64_t tid);
  size_t threads() const { return threads_.size(); }

 private:
  // Enqueue calls by correlation id & mask_. A slot never written holds correlation 0, which no
  // lookup asks for: no "used" flag (80-byte slots, not 88: the ring is tens of MiB written
  // once per call, and each slot's store is a cache miss).
  // calloc'd, not a vector: zero pages the trace never reaches (a short trace uses a few of the
  // 2^19 slots) are never touched, and nothing is written before the first call.
  struct FreeRing {
    void operator()(ApiCall* p) const { std::free(p); }
  };
  std::unique_ptr<ApiCall[], FreeRing> ring_;
  uint32_t mask_;
  size_t max_calls_;
  uint64_t folded_ = 0;
  // node_hash_map semantics are not needed: pointers are cached only between insertions.
  absl::flat_hash_map<uint64_t, ThreadHistory> threads_;
  uint64_t cached_tid_ = 0;
  ThreadHistory* cached_ = nullptr;  // the last thread looked up (most calls come from one)
  absl::flat_hash_map<uint64_t, TimeNs> last_wait_;  // stream -> enter of last StreamWaitEvent
  absl::flat_hash_map<uint64_t, TimeNs> prev_wait_;  // stream -> the one before it
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_TIMELINE_HOST_HISTORY_H_
