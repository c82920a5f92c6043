// memory_accounting.h — device memory allocated through the runtime: live bytes per device (from
// cudaMalloc*/cudaFree calls, and the trace's allocation events when there are no such calls),
// its peak, counts, out-of-memory errors, and reported usage levels.
//
// Memory: one entry per live allocation.
// Thread safety: none.
#ifndef GPUSTALL_ANALYZER_ACCOUNTING_MEMORY_ACCOUNTING_H_
#define GPUSTALL_ANALYZER_ACCOUNTING_MEMORY_ACCOUNTING_H_

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "analyzer/model/types.h"

namespace gs::analyzer {

class MemoryAccounting {
 public:
  void AddCall(const ApiCall& c);
  void AddEvent(const MemoryEvent& e);

  struct Result {
    uint64_t peak_bytes = 0;       // max over devices of the live-bytes peak
    uint32_t peak_device = 0;
    uint64_t allocations = 0, frees = 0, host_allocations = 0, oom_errors = 0;
    uint64_t peak_usage_bytes = 0;
    uint32_t peak_usage_device = 0;
  };
  Result Finish() const;

 private:
  void Alloc(uint32_t device, uint64_t address, uint64_t bytes);
  void Free(uint64_t address);
  struct Live { uint32_t device; uint64_t bytes; };
  absl::flat_hash_map<uint64_t, Live> live_;          // address -> allocation
  absl::flat_hash_map<uint32_t, uint64_t> current_;   // device -> live bytes
  absl::flat_hash_map<uint32_t, uint64_t> peak_;      // device -> peak live bytes
  uint64_t allocations_ = 0, frees_ = 0, host_allocations_ = 0;
  uint64_t api_oom_ = 0, event_oom_ = 0;
  uint64_t event_allocs_ = 0;   // allocation events seen (used only when there are no calls)
  uint64_t peak_usage_ = 0;
  uint32_t peak_usage_device_ = 0;
  bool saw_alloc_calls_ = false;
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_ACCOUNTING_MEMORY_ACCOUNTING_H_
