// api_mempool.cc — the default memory pool of each device, enough for programs that tune
// cudaMallocAsync (release threshold, trimming) before using it. simgpu has one pool per device,
// the default one; its "reserved" and "used" sizes are the device's allocated bytes, and
// allocations from it are cudaMallocAsync allocations.
#include "cudart/api_call.h"

using simgpu::ApiCall;

namespace {

constexpr int kMaxDevices = 64;
char g_pool_tokens[kMaxDevices];                  // a pool handle is the address of one of these
uint64_t g_release_threshold[kMaxDevices] = {};   // stored and reported back, otherwise unused

cudaMemPool_t PoolOf(int device) {
  return reinterpret_cast<cudaMemPool_t>(&g_pool_tokens[device]);
}

// The device of a pool handle, or -1 if it is not one of simgpu's.
int DeviceOf(cudaMemPool_t pool) {
  auto* p = reinterpret_cast<char*>(pool);
  if (p < g_pool_tokens || p >= g_pool_tokens + kMaxDevices) return -1;
  int device = static_cast<int>(p - g_pool_tokens);
  return device < simgpu::DeviceCount() ? device : -1;
}

}  // namespace

extern "C" {

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* memPool, int device) {
  SG_API(cudaDeviceGetDefaultMemPool_v11020, memPool, device);
  if (memPool == nullptr) return call.Finish(cudaErrorInvalidValue);
  if (device < 0 || device >= simgpu::DeviceCount()) return call.Finish(cudaErrorInvalidDevice);
  *memPool = PoolOf(device);
  return call.Finish(cudaSuccess);
}

cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* memPool, int device) {
  SG_API(cudaDeviceGetMemPool_v11020, memPool, device);
  if (memPool == nullptr) return call.Finish(cudaErrorInvalidValue);
  if (device < 0 || device >= simgpu::DeviceCount()) return call.Finish(cudaErrorInvalidDevice);
  *memPool = PoolOf(device);
  return call.Finish(cudaSuccess);
}

cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t memPool) {
  SG_API(cudaDeviceSetMemPool_v11020, device, memPool);
  if (device < 0 || device >= simgpu::DeviceCount()) return call.Finish(cudaErrorInvalidDevice);
  return call.Finish(DeviceOf(memPool) == device ? cudaSuccess : cudaErrorNotSupported);
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, cudaMemPoolAttr attr, void* value) {
  SG_API(cudaMemPoolSetAttribute_v11020, memPool, attr, value);
  int device = DeviceOf(memPool);
  if (device < 0 || value == nullptr) return call.Finish(cudaErrorInvalidValue);
  if (attr == cudaMemPoolAttrReleaseThreshold) {
    g_release_threshold[device] = *static_cast<uint64_t*>(value);
  }
  return call.Finish(cudaSuccess);
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, cudaMemPoolAttr attr, void* value) {
  SG_API(cudaMemPoolGetAttribute_v11020, memPool, attr, value);
  int device = DeviceOf(memPool);
  if (device < 0 || value == nullptr) return call.Finish(cudaErrorInvalidValue);
  size_t free_bytes = 0, total = 0;
  simgpu::MemInfo(device, &free_bytes, &total);
  uint64_t used = total - free_bytes;
  switch (attr) {
    case cudaMemPoolAttrReleaseThreshold:
      *static_cast<uint64_t*>(value) = g_release_threshold[device];
      break;
    case cudaMemPoolAttrReservedMemCurrent:
    case cudaMemPoolAttrReservedMemHigh:
    case cudaMemPoolAttrUsedMemCurrent:
    case cudaMemPoolAttrUsedMemHigh:
      *static_cast<uint64_t*>(value) = used;
      break;
    default:
      *static_cast<int*>(value) = 0;  // the reuse policies: off
      break;
  }
  return call.Finish(cudaSuccess);
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep) {
  SG_API(cudaMemPoolTrimTo_v11020, memPool, minBytesToKeep);
  return call.Finish(DeviceOf(memPool) < 0 ? cudaErrorInvalidValue : cudaSuccess);
}

}  // extern "C"
