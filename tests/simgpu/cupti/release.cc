// release.cc
#include "release.h"

#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace simgpu_cupti {
namespace {

#ifndef SIMGPU_CUPTI_MAJOR
#define SIMGPU_CUPTI_MAJOR 13
#endif

// The struct CUDA 13.0 hands out for each kind.
size_t Size13(CUpti_ActivityKind kind) {
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

uint32_t ReadApiVersion() {
  const uint32_t newest = SIMGPU_CUPTI_MAJOR == 13 ? CUPTI_API_VERSION : 28;
  const char* text = std::getenv("SIMGPU_CUPTI_API_VERSION");
  if (text == nullptr || text[0] == '\0') return newest;
  const uint32_t v = static_cast<uint32_t>(std::strtoul(text, nullptr, 10));
  // 12.x: 12.0/12.1 18, 12.2 20, 12.3 21, 12.4 22, 12.5 23, 12.6 24, 12.8 26, 12.9 28.
  static const uint32_t kCuda12[] = {18, 20, 21, 22, 23, 24, 26, 28};
  if (SIMGPU_CUPTI_MAJOR == 13) return v >= 130000 ? v : newest;
  for (const uint32_t known : kCuda12) {
    if (v == known) return v;
  }
  return newest;
}

}  // namespace

int CudaMajor() { return SIMGPU_CUPTI_MAJOR; }

uint32_t ApiVersion() {
  static const uint32_t version = ReadApiVersion();
  return version;
}

size_t RecordSize(CUpti_ActivityKind kind) {
  const uint32_t v = ApiVersion();
  if (v >= 130000) return Size13(kind);
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel9);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return v >= 26 ? sizeof(CUpti_ActivityMemcpy6) : sizeof(CUpti_ActivityMemcpy5);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return v >= 26 ? sizeof(CUpti_ActivitySynchronization2) : sizeof(CUpti_ActivitySynchronization);
    case CUPTI_ACTIVITY_KIND_MEMORY2:
      return v >= 24 ? sizeof(CUpti_ActivityMemory4) : sizeof(CUpti_ActivityMemory3);
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      return v >= 22 ? sizeof(CUpti_ActivityOverhead3)
                     : v >= 21 ? sizeof(CUpti_ActivityOverhead2) : sizeof(CUpti_ActivityOverhead);
    default: return Size13(kind);  // the kinds simgpu emits keep their layout across 12.x and 13.0
  }
}

void FillReleasePadding(void* record) {
  if (ApiVersion() >= 130000) return;
  auto* r = static_cast<CUpti_Activity*>(record);
  uint8_t* bytes = static_cast<uint8_t*>(record);
  switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      std::memset(bytes + offsetof(CUpti_ActivityMemcpy6, isDeviceLaunched), 0xA5, 4);
      break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      std::memset(bytes + offsetof(CUpti_ActivityMemset4, isDeviceLaunched), 0xA5, 4);
      break;
    default:
      break;
  }
}

}  // namespace simgpu_cupti
