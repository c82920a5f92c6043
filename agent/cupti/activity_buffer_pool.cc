// activity_buffer_pool.cc
#include "agent/cupti/activity_buffer_pool.h"

#include <cstdlib>

namespace gs {

ActivityBufferPool::~ActivityBufferPool() { std::free(storage_); }

bool ActivityBufferPool::Init(int count, size_t bytes) {
  if (count <= 0 || count > kMaxBuffers || bytes < 1024) return false;
  bytes = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  storage_ = static_cast<uint8_t*>(std::aligned_alloc(kAlignment, bytes * static_cast<size_t>(count)));
  if (storage_ == nullptr) return false;
  buffer_bytes_ = bytes;
  count_ = count;
  free_mask_.store(count == 64 ? ~uint64_t{0} : ((uint64_t{1} << count) - 1), std::memory_order_release);
  return true;
}

uint8_t* ActivityBufferPool::Acquire() {
  uint64_t mask = free_mask_.load(std::memory_order_acquire);
  while (mask != 0) {
    const int index = __builtin_ctzll(mask);
    const uint64_t bit = uint64_t{1} << index;
    if (free_mask_.compare_exchange_weak(mask, mask & ~bit, std::memory_order_acq_rel)) {
      return storage_ + static_cast<size_t>(index) * buffer_bytes_;
    }
  }
  exhausted_.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

void ActivityBufferPool::Release(uint8_t* buffer) {
  if (buffer == nullptr || storage_ == nullptr || buffer < storage_) return;
  const size_t offset = static_cast<size_t>(buffer - storage_);
  if (offset % buffer_bytes_ != 0 || offset / buffer_bytes_ >= static_cast<size_t>(count_)) return;
  free_mask_.fetch_or(uint64_t{1} << (offset / buffer_bytes_), std::memory_order_acq_rel);
}

int ActivityBufferPool::in_use() const {
  return count_ - __builtin_popcountll(free_mask_.load(std::memory_order_relaxed));
}

}  // namespace gs
