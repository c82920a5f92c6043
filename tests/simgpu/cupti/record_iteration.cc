// cuptiActivityGetNextRecord: walks a buffer of packed records, each at an 8-byte-aligned
// address, stepping by the size of the struct that CUPTI 13.0 uses for the record's kind.
#include <cupti.h>

#include <cstddef>
#include <cstdint>

namespace simgpu_cupti {
namespace {

size_t RecordSize(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
    case CUPTI_ACTIVITY_KIND_CONTEXT: return sizeof(CUpti_ActivityContext3);
    case CUPTI_ACTIVITY_KIND_NAME: return sizeof(CUpti_ActivityName);
    case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_MARKER_DATA: return sizeof(CUpti_ActivityMarkerData2);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_CDP_KERNEL: return sizeof(CUpti_ActivityCdpKernel);
    case CUPTI_ACTIVITY_KIND_PREEMPTION: return sizeof(CUpti_ActivityPreemption);
    case CUPTI_ACTIVITY_KIND_ENVIRONMENT: return sizeof(CUpti_ActivityEnvironment);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER: return sizeof(CUpti_ActivityUnifiedMemoryCounter3);
    case CUPTI_ACTIVITY_KIND_FUNCTION: return sizeof(CUpti_ActivityFunction);
    case CUPTI_ACTIVITY_KIND_MODULE: return sizeof(CUpti_ActivityModule);
    case CUPTI_ACTIVITY_KIND_DEVICE_ATTRIBUTE: return sizeof(CUpti_ActivityDeviceAttribute);
    case CUPTI_ACTIVITY_KIND_OPENACC_DATA: return sizeof(CUpti_ActivityOpenAccData);
    case CUPTI_ACTIVITY_KIND_OPENACC_LAUNCH: return sizeof(CUpti_ActivityOpenAccLaunch);
    case CUPTI_ACTIVITY_KIND_OPENACC_OTHER: return sizeof(CUpti_ActivityOpenAccOther);
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: return sizeof(CUpti_ActivityCudaEvent2);
    case CUPTI_ACTIVITY_KIND_STREAM: return sizeof(CUpti_ActivityStream);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_NVLINK: return sizeof(CUpti_ActivityNvLink4);
    case CUPTI_ACTIVITY_KIND_MEMORY: return sizeof(CUpti_ActivityMemory);
    case CUPTI_ACTIVITY_KIND_PCIE: return sizeof(CUpti_ActivityPcie);
    case CUPTI_ACTIVITY_KIND_OPENMP: return sizeof(CUpti_ActivityOpenMp);
    case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: return sizeof(CUpti_ActivityMemoryPool3);
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: return sizeof(CUpti_ActivityGraphTrace2);
    case CUPTI_ACTIVITY_KIND_JIT: return sizeof(CUpti_ActivityJit2);
    case CUPTI_ACTIVITY_KIND_DEVICE_GRAPH_TRACE: return sizeof(CUpti_ActivityDeviceGraphTrace);
    case CUPTI_ACTIVITY_KIND_MEM_DECOMPRESS: return sizeof(CUpti_ActivityMemDecompress);
    case CUPTI_ACTIVITY_KIND_CONFIDENTIAL_COMPUTE_ROTATION:
      return sizeof(CUpti_ActivityConfidentialComputeRotation);
    default: return 0;
  }
}

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
