#include "analyzer/accounting/memory_accounting.h"

#include <algorithm>

namespace gs::analyzer {

void MemoryAccounting::Alloc(uint32_t device, uint64_t address, uint64_t bytes) {
  if (address != 0) live_[address] = Live{device, bytes};
  uint64_t& cur = current_[device];
  cur += bytes;
  uint64_t& peak = peak_[device];
  peak = std::max(peak, cur);
}

void MemoryAccounting::Free(uint64_t address) {
  auto it = live_.find(address);
  if (it == live_.end()) return;  // allocated before recording started, or not through the runtime
  uint64_t& cur = current_[it->second.device];
  cur -= std::min(cur, it->second.bytes);
  live_.erase(it);
}

void MemoryAccounting::AddCall(const ApiCall& c) {
  switch (c.api_class) {
    case ApiClass::kMalloc:
      saw_alloc_calls_ = true;
      if (c.result == kCudaErrorMemoryAllocation) {
        ++api_oom_;
      } else if (c.result == 0) {
        ++allocations_;
        Alloc(c.device, c.address, c.bytes);
      }
      break;
    case ApiClass::kFree:
      if (c.result == 0) {
        ++frees_;
        Free(c.address);
      }
      break;
    case ApiClass::kHostAlloc:
      if (c.result == kCudaErrorMemoryAllocation) ++api_oom_;
      else if (c.result == 0) ++host_allocations_;
      break;
    default:
      break;
  }
}

void MemoryAccounting::AddEvent(const MemoryEvent& e) {
  switch (e.kind) {
    case MemoryEventKind::kAlloc:
      ++event_allocs_;
      // The calls already account for runtime allocations; events only fill in without them.
      if (!saw_alloc_calls_) Alloc(e.device, e.address, e.bytes);
      break;
    case MemoryEventKind::kFree:
      if (!saw_alloc_calls_) Free(e.address);
      break;
    case MemoryEventKind::kUsage:
    case MemoryEventKind::kReserved:
      if (e.bytes > peak_usage_) {
        peak_usage_ = e.bytes;
        peak_usage_device_ = e.device;
      }
      break;
    case MemoryEventKind::kOom:
      ++event_oom_;
      break;
    default:
      break;
  }
}

MemoryAccounting::Result MemoryAccounting::Finish() const {
  Result r;
  for (const auto& [dev, peak] : peak_) {
    if (peak > r.peak_bytes) {
      r.peak_bytes = peak;
      r.peak_device = dev;
    }
  }
  r.allocations = saw_alloc_calls_ ? allocations_ : event_allocs_;
  r.frees = frees_;
  r.host_allocations = host_allocations_;
  // The same failure may be both a failed call and an OOM event: count the larger of the two.
  r.oom_errors = std::max(api_oom_, event_oom_);
  r.peak_usage_bytes = peak_usage_;
  r.peak_usage_device = peak_usage_device_;
  return r;
}

}  // namespace gs::analyzer
