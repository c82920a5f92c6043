// ring_pool.h — the per-thread rings, preallocated at activation within GS_BUFFER_MB.
//
// A thread gets its ring on its first recorded call by claiming a free slot with one CAS (no
// malloc, no lock). When the pool has no free ring, the thread's records are dropped and counted
// (`no_ring_drops`). When a thread exits, its ring is marked kExited (pthread key destructor, see
// ring_recorder.cc); the writer drains it one last time and returns it to kFree, so a process that
// creates threads forever never runs out of rings as long as they do not all live at once.
//
// The memory is one anonymous mapping made at Init and never unmapped: a thread that raced with
// shutdown may still write into its ring after the last drain, and a forked child leaks the pool
// of its parent rather than free memory another (now vanished) thread was using.
//
// Thread safety: Claim from any thread; Drain/Recycle/ForEach only from the writer thread.
#ifndef GPUSTALL_AGENT_RECORD_RING_POOL_H_
#define GPUSTALL_AGENT_RECORD_RING_POOL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "agent/record/ring.h"

namespace gs {

// One thread's ring and what the writer needs to know about its owner.
// Owner-only (RingRecorder's stack reuse, ring_recorder.h): the stacks last unwound for calls
// whose site was known, one entry per site (a loop launching four kernels through four stubs has
// four), and where each of their return addresses sits on the stack. 17 KiB a thread: the pool
// keeps them apart from the rings' headers, so a table's pages are touched only by a thread that
// claims its ring.
struct StackReuseTable {
  static constexpr int kPcs = 130;  // the largest GS_STACK_DEPTH (128), +1, +1 spare
  // A site's entry is one of the kWays of its set (by site PC and stack pointer), replaced round
  // robin within the set: a framework's step reaches the one CUPTI callback site through dozens
  // of call chains, each its own stack pointer, and 8 entries in one round robin missed on
  // every call once a step had more than 8 (BENCHMARKS.md, "Call sites of many depths").
  static constexpr int kWays = 4;
  static constexpr int kSets = 32;
  static constexpr int kEntries = kWays * kSets;
  struct Entry {  // what a lookup reads: a set's ways share two cache lines
    uintptr_t site_pc;
    uintptr_t site_cfa;
    int max_pcs;     // the capture's limit it was taken under
    int count;       // 0: nothing to reuse
    uint32_t epoch;  // RingRecorder::NewReuseEpoch's count when filled: another epoch's is empty
  };
  struct Frames {
    uint64_t pcs[kPcs];
    uintptr_t slots[kPcs];
  };
  // MurmurHash3's finalizer: stack pointers a fixed frame size apart (one function at many
  // depths) and unrelated ones alike spread over the sets.
  static int SetOf(uintptr_t site_pc, uintptr_t site_cfa) {
    uint64_t h = site_cfa ^ (uint64_t{site_pc} << 17);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return static_cast<int>(h & (kSets - 1));
  }
  uint8_t next[kSets];  // per set, the way a new site replaces
  Entry entries[kEntries];  // set s: entries[s * kWays, (s + 1) * kWays)
  Frames frames[kEntries];  // touched only for the entries filled
};
static_assert(StackReuseTable::kEntries <= 256, "a record names its reuse entry in one byte (RingRecordHeader)");

struct ThreadRing {
  enum State : int { kFree = 0, kClaiming = 1, kOwned = 2, kExited = 3 };

  SpscRing ring;
  std::atomic<int> state{kFree};
  // Written by the owner while kClaiming, read by the writer after seeing kOwned/kExited.
  uint64_t tid = 0;
  uint64_t owner_serial = 0;  // increases with every claim: a new serial is a new thread
  uintptr_t stack_low = 0;    // the owner's stack range, for the frame-pointer walker
  uintptr_t stack_high = 0;
  StackReuseTable* reuse = nullptr;  // this ring's table (owner-only; cleared at each claim)
  uint64_t stack_unwinds = 0;        // owner-written; tests read them when the owner is idle
  uint64_t stack_reuses = 0;
  // Producer-written, writer-read. Cumulative for the slot (never reset).
  alignas(64) std::atomic<uint64_t> dropped{0};
  std::atomic<uint64_t> recorded{0};

};

class RingPool {
 public:
  // Maps `total_bytes` (plus a few hundred bytes of header and a ~270 KiB StackReuseTable per ring,
  // whose pages only a claiming thread touches) and splits them into rings
  // of a power-of-two capacity (at least `min_ring_bytes`, at most 1 MiB; between 1 and 1024
  // rings). Returns false if the mapping failed.
  bool Init(size_t total_bytes, size_t min_ring_bytes = 64 * 1024);

  // Claims a free ring for the calling thread (state kClaiming; the caller fills tid/stack
  // fields and then calls Publish). nullptr when none is free: counted in no_ring_drops().
  ThreadRing* Claim();
  void Publish(ThreadRing* ring) { ring->state.store(ThreadRing::kOwned, std::memory_order_release); }

  // The owner thread exited (called from its pthread key destructor).
  static void MarkExited(ThreadRing* ring) {
    ring->state.store(ThreadRing::kExited, std::memory_order_release);
  }

  // Writer: frees an exited ring after its final drain. Its counters stay (they are cumulative).
  static void Recycle(ThreadRing* ring) {
    ring->state.store(ThreadRing::kFree, std::memory_order_release);
  }

  size_t ring_count() const { return count_; }
  // The stacks unwound and reused (ThreadRing::stack_unwinds, stack_reuses) over every ring; read
  // when the rings' owners are idle (tests, benchmarks).
  struct StackCounts {
    uint64_t unwinds = 0;
    uint64_t reuses = 0;
  };
  StackCounts stack_counts() const {
    StackCounts c;
    for (size_t i = 0; i < count_; ++i) {
      c.unwinds += rings_[i].stack_unwinds;
      c.reuses += rings_[i].stack_reuses;
    }
    return c;
  }
  size_t ring_capacity() const { return capacity_; }
  size_t mapped_bytes() const { return mapped_; }
  ThreadRing& ring(size_t i) { return rings_[i]; }

  void CountNoRingDrop() { no_ring_drops_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t no_ring_drops() const { return no_ring_drops_.load(std::memory_order_relaxed); }

 private:
  ThreadRing* rings_ = nullptr;
  size_t count_ = 0;
  size_t capacity_ = 0;
  size_t mapped_ = 0;
  std::atomic<uint64_t> next_serial_{1};
  std::atomic<uint64_t> no_ring_drops_{0};
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_RECORD_RING_POOL_H_
