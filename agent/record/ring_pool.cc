#include "agent/record/ring_pool.h"

#include <sys/mman.h>

#include <new>

namespace gs {
namespace {
size_t FloorPowerOfTwo(size_t n) {
  size_t p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}
}  // namespace

bool RingPool::Init(size_t total_bytes, size_t min_ring_bytes) {
  constexpr size_t kMaxRings = 1024;
  constexpr size_t kMaxRingBytes = 1 << 20;
  // Aim for 32 rings (threads recording at once: a training process has a few CUDA-issuing
  // threads, not hundreds), so each is large: a Python launch loop records ~650-byte entries
  // (native + Python frames) at 50-100k calls/s, and a 256 KiB ring overflowed between two 10 ms
  // drains (seen: 30% of launches dropped on a loaded machine). With the default 64 MiB bound
  // this gives 56 rings of 1 MiB. Fewer, larger ones if the budget is small.
  size_t capacity = FloorPowerOfTwo(total_bytes / 32);
  if (capacity < min_ring_bytes) capacity = FloorPowerOfTwo(min_ring_bytes);
  if (capacity > kMaxRingBytes) capacity = kMaxRingBytes;
  // The ring headers (a few hundred bytes each) come on top of the bound.
  size_t count = total_bytes / capacity;
  if (count > kMaxRings) count = kMaxRings;
  if (count == 0) count = 1;
  // Headers, then the rings' data, then the stack-reuse tables (untouched until claimed).
  const size_t bytes = count * (sizeof(ThreadRing) + capacity + sizeof(StackReuseTable));
  // MAP_NORESERVE: the bound is a bound, not a commitment; pages are touched only when used.
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED) return false;
  rings_ = static_cast<ThreadRing*>(memory);
  uint8_t* data = static_cast<uint8_t*>(memory) + count * sizeof(ThreadRing);
  for (size_t i = 0; i < count; ++i) {
    ThreadRing* ring = new (&rings_[i]) ThreadRing();
    ring->ring.Init(data + i * capacity, capacity);
    ring->reuse = reinterpret_cast<StackReuseTable*>(data + count * capacity) + i;
  }
  count_ = count;
  capacity_ = capacity;
  mapped_ = bytes;
  return true;
}

ThreadRing* RingPool::Claim() {
  for (size_t i = 0; i < count_; ++i) {
    ThreadRing& ring = rings_[i];
    int expected = ThreadRing::kFree;
    if (ring.state.load(std::memory_order_relaxed) == expected &&
        ring.state.compare_exchange_strong(expected, ThreadRing::kClaiming,
                                           std::memory_order_acquire)) {
      ring.owner_serial = next_serial_.fetch_add(1, std::memory_order_relaxed);
      return &ring;
    }
  }
  CountNoRingDrop();
  return nullptr;
}

}  // namespace gs

