// device_properties.cc — what simgpu's devices look like (an H100-like part), shared by
// cudaGetDeviceProperties/cudaDeviceGetAttribute (libcudart.so.13) and cuDeviceGetAttribute
// (libcuda.so.1). cudaDeviceAttr and CUdevice_attribute have the same values (cuda.h,
// driver_types.h), so one table answers both.
//
// The SM's limits are an H100 SXM5's. Sources: NVIDIA's CUDA C++ Programming Guide, "Compute
// Capabilities", table "Technical Specifications per Compute Capability", column 9.0: 228 KB of
// shared memory per SM, at most 227 KB per block (48 KB without opting in), 1 KB reserved per
// block by the system, 64K 32-bit registers per SM and at most 64K per block, 32 resident blocks
// and 2048 resident threads per SM, warp size 32, 1024 threads per block; and the NVIDIA H100
// Tensor Core GPU Architecture whitepaper: 132 SMs on the H100 SXM5.
#include <cstdio>
#include <cstring>

#include "driver/driver.h"

namespace simgpu {

void FillDeviceProperties(cudaDeviceProp* p, int device) {
  std::memset(p, 0, sizeof *p);
  std::snprintf(p->name, sizeof p->name, "simgpu simulated GPU %d", device);
  for (int i = 0; i < 16; ++i) p->uuid.bytes[i] = static_cast<char>(0x50 + device + i);
  size_t free_bytes = 0, total = 0;
  simgpu::MemInfo(device, &free_bytes, &total);
  p->totalGlobalMem = total;
  p->sharedMemPerBlock = kSharedMemPerBlock;  // Programming Guide: 48 KB
  p->regsPerBlock = 65536;  // 64K per block
  p->warpSize = 32;
  p->memPitch = 2147483647;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024; p->maxThreadsDim[1] = 1024; p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 2147483647; p->maxGridSize[1] = 65535; p->maxGridSize[2] = 65535;
  p->totalConstMem = 64 << 10;
  p->major = 9;
  p->minor = 0;
  p->textureAlignment = 512;
  p->texturePitchAlignment = 32;
  p->multiProcessorCount = 132;  // H100 whitepaper: H100 SXM5
  p->canMapHostMemory = 1;
  p->surfaceAlignment = 512;
  p->concurrentKernels = 1;
  p->ECCEnabled = 1;
  p->pciBusID = device + 1;
  p->asyncEngineCount = 2;
  p->unifiedAddressing = 1;
  p->memoryBusWidth = 5120;
  p->l2CacheSize = 50 << 20;
  p->maxThreadsPerMultiProcessor = 2048;  // Programming Guide: 2048 resident threads per SM
  p->streamPrioritiesSupported = 1;
  p->globalL1CacheSupported = 1;
  p->localL1CacheSupported = 1;
  p->sharedMemPerMultiprocessor = kSharedMemPerMultiprocessor;  // 228 KB per SM
  p->regsPerMultiprocessor = 65536;  // 64K per SM
  p->managedMemory = 1;
  p->concurrentManagedAccess = 1;
  p->computePreemptionSupported = 1;
  p->cooperativeLaunch = 1;
  p->sharedMemPerBlockOptin = kSharedMemPerBlockOptin;  // 227 KB per block, opted in
  p->reservedSharedMemPerBlock = kReservedSharedMemPerBlock;  // 1 KB reserved per block
  p->maxBlocksPerMultiProcessor = 32;  // 32 resident blocks per SM
  p->hostRegisterSupported = 1;
  p->memoryPoolsSupported = 1;
  p->clusterLaunch = 1;
  p->deviceNumaId = -1;
  p->hostNumaId = -1;
}

// cudaDeviceGetAttribute from the same properties, for the attributes programs commonly ask.
bool DeviceAttribute(int attr_value, int device, int* value) {
  cudaDeviceProp p;
  FillDeviceProperties(&p, device);
  switch (static_cast<cudaDeviceAttr>(attr_value)) {
    case cudaDevAttrMaxThreadsPerBlock: *value = p.maxThreadsPerBlock; return true;
    case cudaDevAttrMaxBlockDimX: *value = p.maxThreadsDim[0]; return true;
    case cudaDevAttrMaxBlockDimY: *value = p.maxThreadsDim[1]; return true;
    case cudaDevAttrMaxBlockDimZ: *value = p.maxThreadsDim[2]; return true;
    case cudaDevAttrMaxGridDimX: *value = p.maxGridSize[0]; return true;
    case cudaDevAttrMaxGridDimY: *value = p.maxGridSize[1]; return true;
    case cudaDevAttrMaxGridDimZ: *value = p.maxGridSize[2]; return true;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = static_cast<int>(p.sharedMemPerBlock); return true;
    case cudaDevAttrTotalConstantMemory: *value = static_cast<int>(p.totalConstMem); return true;
    case cudaDevAttrWarpSize: *value = p.warpSize; return true;
    case cudaDevAttrMaxRegistersPerBlock: *value = p.regsPerBlock; return true;
    case cudaDevAttrMultiProcessorCount: *value = p.multiProcessorCount; return true;
    case cudaDevAttrComputeCapabilityMajor: *value = p.major; return true;
    case cudaDevAttrComputeCapabilityMinor: *value = p.minor; return true;
    case cudaDevAttrConcurrentKernels: *value = 1; return true;
    case cudaDevAttrAsyncEngineCount: *value = p.asyncEngineCount; return true;
    case cudaDevAttrUnifiedAddressing: *value = 1; return true;
    case cudaDevAttrCanMapHostMemory: *value = 1; return true;
    case cudaDevAttrManagedMemory: *value = 1; return true;
    case cudaDevAttrConcurrentManagedAccess: *value = 1; return true;
    case cudaDevAttrPciBusId: *value = p.pciBusID; return true;
    case cudaDevAttrPciDeviceId: *value = 0; return true;
    case cudaDevAttrPciDomainId: *value = 0; return true;
    case cudaDevAttrGlobalMemoryBusWidth: *value = p.memoryBusWidth; return true;
    case cudaDevAttrL2CacheSize: *value = p.l2CacheSize; return true;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = p.maxThreadsPerMultiProcessor; return true;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
      *value = static_cast<int>(p.sharedMemPerMultiprocessor); return true;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
      *value = static_cast<int>(p.sharedMemPerBlockOptin); return true;
    case cudaDevAttrMaxRegistersPerMultiprocessor: *value = p.regsPerMultiprocessor; return true;
    case cudaDevAttrStreamPrioritiesSupported: *value = 1; return true;
    case cudaDevAttrCooperativeLaunch: *value = 1; return true;
    case cudaDevAttrMemoryPoolsSupported: *value = 1; return true;
    case cudaDevAttrMaxBlocksPerMultiprocessor: *value = p.maxBlocksPerMultiProcessor; return true;
    case cudaDevAttrReservedSharedMemoryPerBlock:
      *value = static_cast<int>(p.reservedSharedMemPerBlock); return true;
    case cudaDevAttrEccEnabled: *value = 1; return true;
    case cudaDevAttrIntegrated: *value = 0; return true;
    case cudaDevAttrComputeMode: *value = 0; return true;
    case cudaDevAttrHostRegisterSupported: *value = 1; return true;
    default: return false;
  }
}

}  // namespace simgpu
