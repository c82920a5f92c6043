// cuptiActivityGetNextRecord: walks a buffer of packed records, each at an 8-byte-aligned
// address, stepping by the size of the struct that the release simgpu plays uses for the record's
// kind (release.h).
#include <cupti.h>

#include <cstddef>
#include <cstdint>

#include "release.h"

namespace simgpu_cupti {
namespace {

size_t AlignedOffset(const uint8_t* buffer, size_t offset) {
  uintptr_t at = reinterpret_cast<uintptr_t>(buffer) + offset;
  return ((at + 7) & ~uintptr_t{7}) - reinterpret_cast<uintptr_t>(buffer);
}

}  // namespace
}  // namespace simgpu_cupti

extern "C" CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buffer,
                                                           size_t validBufferSizeBytes,
                                                           CUpti_Activity** record) {
  using simgpu_cupti::AlignedOffset;
  using simgpu_cupti::RecordSize;
  if (buffer == nullptr || record == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  size_t offset = 0;
  if (*record != nullptr) {
    auto* previous = reinterpret_cast<uint8_t*>(*record);
    size_t previous_size = RecordSize((*record)->kind);
    if (previous < buffer || previous_size == 0) return CUPTI_ERROR_INVALID_KIND;
    offset = static_cast<size_t>(previous - buffer) + previous_size;
  }
  offset = AlignedOffset(buffer, offset);
  if (offset >= validBufferSizeBytes ||
      validBufferSizeBytes - offset < sizeof(CUpti_ActivityKind)) {
    return CUPTI_ERROR_MAX_LIMIT_REACHED;
  }
  auto* next = reinterpret_cast<CUpti_Activity*>(buffer + offset);
  size_t size = RecordSize(next->kind);
  if (size == 0 || validBufferSizeBytes - offset < size) return CUPTI_ERROR_INVALID_KIND;
  *record = next;
  return CUPTI_SUCCESS;
}
