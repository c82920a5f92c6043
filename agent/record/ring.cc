#include "agent/record/ring.h"

namespace gs {

void SpscRing::Init(uint8_t* memory, size_t capacity) {
  data_ = memory;
  capacity_ = capacity;
  head_.store(0, std::memory_order_relaxed);
  tail_.store(0, std::memory_order_relaxed);
  cached_tail_ = 0;
  pending_pad_ = 0;
}

}  // namespace gs
