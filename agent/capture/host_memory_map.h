// host_memory_map.h — which host address ranges are page-locked (pinned) or managed, as learnt from
// the allocation calls the agent intercepts (cudaHostAlloc, cudaMallocHost, cudaHostRegister,
// cudaMallocManaged and their frees).
//
// Why a map and not cudaPointerGetAttributes per copy: that call costs a driver round trip, may
// initialise a context as a side effect, and sets the application's sticky error state on failure;
// the allocation calls are rare, copies are hot.
//
// Thread safety: Lookup is lock-free in the common case (a seqlock-protected sorted array: readers
// retry if a writer ran concurrently; only if a writer keeps the sequence busy for hundreds of
// retries, e.g. it was preempted mid-write, does a reader take the writer's lock). Add/Remove
// serialise on a spin lock; they run only in allocation calls.
// Storage is static (no allocation, no destructor): safe at exit and in a forked child.
#ifndef GPUSTALL_AGENT_CAPTURE_HOST_MEMORY_MAP_H_
#define GPUSTALL_AGENT_CAPTURE_HOST_MEMORY_MAP_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "agent/record/events.h"

namespace gs {

class HostMemoryMap {
 public:
  // Ranges beyond this many are not remembered (counted in overflowed()); copies from them are
  // then reported as pageable, and CUPTI's records still say the truth.
  static constexpr size_t kCapacity = 16384;

  constexpr HostMemoryMap() = default;
  HostMemoryMap(const HostMemoryMap&) = delete;
  HostMemoryMap& operator=(const HostMemoryMap&) = delete;

  // Remembers [begin, begin + bytes) as `kind` (kPinned or kManaged). Returns false if full.
  bool Add(uint64_t begin, uint64_t bytes, MemKind kind);
  // Forgets the range that starts exactly at `begin`, if any. Returns true if one was removed.
  bool Remove(uint64_t begin);
  // The kind of the range containing `address`, or kUnknown if none contains it.
  MemKind Lookup(uint64_t address) const;
  // True if a range starts exactly at `begin` (cheap pre-check before Remove on hot frees).
  bool ContainsStart(uint64_t begin) const;

  size_t size() const { return count_.load(std::memory_order_relaxed); }
  uint64_t overflowed() const { return overflowed_.load(std::memory_order_relaxed); }

  // After fork, in the child: the lock may have been held by a thread that no longer exists.
  void OnForkChild() { lock_.store(false, std::memory_order_relaxed); }
  // Forgets everything (tests).
  void Clear();

 private:
  struct Entry {
    std::atomic<uint64_t> begin{0};
    std::atomic<uint64_t> end{0};
    std::atomic<uint8_t> kind{0};
  };
  // Index of the last entry with begin <= address, or -1. Reads only; caller validates the seqlock.
  long FindFloor(uint64_t address, size_t count) const;
  void Lock();
  void Unlock() { lock_.store(false, std::memory_order_release); }
  void BeginWrite();
  void EndWrite();

  std::atomic<uint32_t> seq_{0};
  std::atomic<size_t> count_{0};
  std::atomic<uint64_t> overflowed_{0};
  std::atomic<bool> lock_{false};
  Entry entries_[kCapacity];
};

// The process-wide map that the shim fills and both the shim and the CUPTI callback path read.
HostMemoryMap& ProcessHostMemoryMap();

}  // namespace gs

#endif  // GPUSTALL_AGENT_CAPTURE_HOST_MEMORY_MAP_H_
