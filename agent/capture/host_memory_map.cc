// host_memory_map.cc — seqlock-protected sorted array of host ranges.
#include "agent/capture/host_memory_map.h"

#include <sched.h>

namespace gs {
namespace {
// A writer holds the sequence odd for well under a microsecond; readers retry that long. If the
// writer was preempted meanwhile (oversubscribed machines), readers take the writer's lock rather
// than misreport pinned memory as pageable: correct always, lock-free in the common case.
constexpr int kMaxReadAttempts = 256;
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
}  // namespace

void HostMemoryMap::Lock() {
  for (int spins = 0; lock_.exchange(true, std::memory_order_acquire); ++spins) {
    if (spins < 1000) {
      CpuRelax();
    } else {
      sched_yield();  // the holder may have been preempted
    }
  }
}

// Seqlock writer protocol: odd sequence while the array is being changed.
void HostMemoryMap::BeginWrite() {
  seq_.store(seq_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
}
void HostMemoryMap::EndWrite() {
  seq_.store(seq_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

long HostMemoryMap::FindFloor(uint64_t address, size_t count) const {
  long lo = 0, hi = static_cast<long>(count) - 1, found = -1;
  while (lo <= hi) {
    const long mid = lo + (hi - lo) / 2;
    if (entries_[mid].begin.load(std::memory_order_relaxed) <= address) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}

bool HostMemoryMap::Add(uint64_t begin, uint64_t bytes, MemKind kind) {
  if (begin == 0 || bytes == 0) return false;
  Lock();
  const size_t n = count_.load(std::memory_order_relaxed);
  const long floor = FindFloor(begin, n);
  if (floor >= 0 && entries_[floor].begin.load(std::memory_order_relaxed) == begin) {
    // Same start again (re-registration): update in place.
    BeginWrite();
    entries_[floor].end.store(begin + bytes, std::memory_order_relaxed);
    entries_[floor].kind.store(static_cast<uint8_t>(kind), std::memory_order_relaxed);
    EndWrite();
    Unlock();
    return true;
  }
  if (n == kCapacity) {
    overflowed_.fetch_add(1, std::memory_order_relaxed);
    Unlock();
    return false;
  }
  const size_t at = static_cast<size_t>(floor + 1);
  BeginWrite();
  for (size_t i = n; i > at; --i) {
    entries_[i].begin.store(entries_[i - 1].begin.load(std::memory_order_relaxed), std::memory_order_relaxed);
    entries_[i].end.store(entries_[i - 1].end.load(std::memory_order_relaxed), std::memory_order_relaxed);
    entries_[i].kind.store(entries_[i - 1].kind.load(std::memory_order_relaxed), std::memory_order_relaxed);
  }
  entries_[at].begin.store(begin, std::memory_order_relaxed);
  entries_[at].end.store(begin + bytes, std::memory_order_relaxed);
  entries_[at].kind.store(static_cast<uint8_t>(kind), std::memory_order_relaxed);
  count_.store(n + 1, std::memory_order_relaxed);
  EndWrite();
  Unlock();
  return true;
}

bool HostMemoryMap::Remove(uint64_t begin) {
  Lock();
  const size_t n = count_.load(std::memory_order_relaxed);
  const long at = FindFloor(begin, n);
  if (at < 0 || entries_[at].begin.load(std::memory_order_relaxed) != begin) {
    Unlock();
    return false;
  }
  BeginWrite();
  for (size_t i = static_cast<size_t>(at); i + 1 < n; ++i) {
    entries_[i].begin.store(entries_[i + 1].begin.load(std::memory_order_relaxed), std::memory_order_relaxed);
    entries_[i].end.store(entries_[i + 1].end.load(std::memory_order_relaxed), std::memory_order_relaxed);
    entries_[i].kind.store(entries_[i + 1].kind.load(std::memory_order_relaxed), std::memory_order_relaxed);
  }
  count_.store(n - 1, std::memory_order_relaxed);
  EndWrite();
  Unlock();
  return true;
}

MemKind HostMemoryMap::Lookup(uint64_t address) const {
  for (int attempt = 0; attempt < kMaxReadAttempts; ++attempt) {
    const uint32_t before = seq_.load(std::memory_order_acquire);
    if (before & 1) {
      CpuRelax();
      continue;
    }
    size_t n = count_.load(std::memory_order_relaxed);
    if (n > kCapacity) n = kCapacity;
    MemKind kind = MemKind::kUnknown;
    const long at = FindFloor(address, n);
    if (at >= 0 && address < entries_[at].end.load(std::memory_order_relaxed)) {
      kind = static_cast<MemKind>(entries_[at].kind.load(std::memory_order_relaxed));
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    if (seq_.load(std::memory_order_relaxed) == before) return kind;
  }
  // Slow path: a writer kept the sequence busy (or was preempted mid-write).
  auto* self = const_cast<HostMemoryMap*>(this);
  self->Lock();
  const size_t n = count_.load(std::memory_order_relaxed);
  const long at = FindFloor(address, n);
  MemKind kind = MemKind::kUnknown;
  if (at >= 0 && address < entries_[at].end.load(std::memory_order_relaxed)) {
    kind = static_cast<MemKind>(entries_[at].kind.load(std::memory_order_relaxed));
  }
  self->Unlock();
  return kind;
}

bool HostMemoryMap::ContainsStart(uint64_t begin) const {
  for (int attempt = 0; attempt < kMaxReadAttempts; ++attempt) {
    const uint32_t before = seq_.load(std::memory_order_acquire);
    if (before & 1) {
      CpuRelax();
      continue;
    }
    size_t n = count_.load(std::memory_order_relaxed);
    if (n > kCapacity) n = kCapacity;
    const long at = FindFloor(begin, n);
    const bool found = at >= 0 && entries_[at].begin.load(std::memory_order_relaxed) == begin;
    std::atomic_thread_fence(std::memory_order_acquire);
    if (seq_.load(std::memory_order_relaxed) == before) return found;
  }
  return true;  // undecided under heavy writing: the caller's locked Remove decides
}

void HostMemoryMap::Clear() {
  Lock();
  BeginWrite();
  count_.store(0, std::memory_order_relaxed);
  EndWrite();
  Unlock();
}

HostMemoryMap& ProcessHostMemoryMap() {
  // Constant-initialised static: no constructor runs, nothing is destroyed at exit.
  static HostMemoryMap map;
  return map;
}

}  // namespace gs
