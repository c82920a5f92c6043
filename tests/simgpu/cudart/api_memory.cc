// api_memory.cc — allocation, host memory registration, pointer attributes, peer copies.
//
// Implicit synchronisation (NVIDIA's "API synchronization behavior" and the programming guide's
// "Implicit Synchronization"), as simgpu models it:
//   cudaFree(p != NULL)        host waits for all work on p's device, then frees
//   cudaFreeHost, cudaHostUnregister   host waits for all work on every device
//   cudaMalloc, cudaMallocHost, cudaHostAlloc, cudaHostRegister, cudaMallocPitch
//                              no host wait, but a device-wide ordering point: work submitted
//                              later on any stream starts after all work submitted before
//   cudaMallocAsync / cudaFreeAsync    stream-ordered, no synchronisation
#include "cudart/abi13.h"
#include "cudart/api_call.h"
#include "cudart/driver_calls.h"

using simgpu::ApiCall;
using simgpu::MemKind;

namespace {

void PayHostCost(uint64_t ns) { simgpu::WaitUntilNs(simgpu::NowNs() + ns); }

cudaError_t Malloc(ApiCall& call, void** devPtr, size_t size, bool managed) {
  if (devPtr == nullptr) return cudaErrorInvalidValue;
  PayHostCost(simgpu::GetConfig().malloc_host_ns);
  cudaError_t e = simgpu::DeviceMalloc(call.device(), size, managed, false, call.correlation_id(),
                                       devPtr);
  if (e == cudaSuccess) simgpu::DeviceBarrier(call.device());
  return e;
}

cudaError_t HostAlloc(ApiCall& call, void** pHost, size_t size) {
  if (pHost == nullptr) return cudaErrorInvalidValue;
  PayHostCost(simgpu::GetConfig().host_alloc_host_ns);
  cudaError_t e = simgpu::HostAllocPinned(size, call.correlation_id(), pHost);
  if (e == cudaSuccess) simgpu::DeviceBarrier(call.device());
  return e;
}

}  // namespace

extern "C" {

cudaError_t cudaMalloc(void** devPtr, size_t size) {
  SG_API(cudaMalloc_v3020, devPtr, size);
  return call.Finish(simgpu::NestedMemAlloc(devPtr, size, call.device(), [&] {
    return Malloc(call, devPtr, size, false);
  }));
}

cudaError_t cudaMallocManaged(void** devPtr, size_t size, unsigned int flags) {
  SG_API(cudaMallocManaged_v6000, devPtr, size, flags);
  if (size == 0) return call.Finish(cudaErrorInvalidValue);
  return call.Finish(Malloc(call, devPtr, size, true));
}

cudaError_t cudaMallocPitch(void** devPtr, size_t* pitch, size_t width, size_t height) {
  SG_API(cudaMallocPitch_v3020, devPtr, pitch, width, height);
  if (pitch == nullptr) return call.Finish(cudaErrorInvalidValue);
  *pitch = (width + 511) / 512 * 512;
  return call.Finish(Malloc(call, devPtr, *pitch * height, false));
}

cudaError_t cudaFree(void* devPtr) {
  SG_API(cudaFree_v3020, devPtr);
  if (devPtr == nullptr) return call.Finish(cudaSuccess);  // no synchronisation either
  simgpu::PointerInfo info = simgpu::ClassifyPointer(devPtr);
  if (info.base != reinterpret_cast<uintptr_t>(devPtr) ||
      (info.kind != MemKind::kDevice && info.kind != MemKind::kManaged)) {
    return call.Finish(cudaErrorInvalidValue);
  }
  return call.Finish(simgpu::NestedMemFree(devPtr, call.device(), [&]() -> cudaError_t {
    cudaError_t e = simgpu::SynchronizeDevice(info.device);
    PayHostCost(simgpu::GetConfig().free_host_ns);
    cudaError_t f = simgpu::DeviceFree(devPtr, call.correlation_id());
    return e != cudaSuccess ? e : f;
  }));
}

cudaError_t cudaMallocHost(void** ptr, size_t size) {
  SG_API(cudaMallocHost_v3020, ptr, size);
  return call.Finish(simgpu::NestedHostAlloc(ptr, size, 0, call.device(), [&] {
    return HostAlloc(call, ptr, size);
  }));
}

cudaError_t cudaHostAlloc(void** pHost, size_t size, unsigned int flags) {
  SG_API(cudaHostAlloc_v3020, pHost, size, flags);
  return call.Finish(simgpu::NestedHostAlloc(pHost, size, flags, call.device(), [&] {
    return HostAlloc(call, pHost, size);
  }));
}

cudaError_t cudaFreeHost(void* ptr) {
  SG_API(cudaFreeHost_v3020, ptr);
  if (ptr == nullptr) return call.Finish(cudaSuccess);
  simgpu::PointerInfo info = simgpu::ClassifyPointer(ptr);
  if (info.kind != MemKind::kPinned || info.registered ||
      info.base != reinterpret_cast<uintptr_t>(ptr)) {
    return call.Finish(cudaErrorInvalidValue);
  }
  return call.Finish(simgpu::NestedHostFree(ptr, call.device(), [&] {
    simgpu::SynchronizeAllDevices();
    PayHostCost(simgpu::GetConfig().free_host_ns);
    return simgpu::HostFreePinned(ptr, call.correlation_id());
  }));
}

cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned int flags) {
  SG_API(cudaHostRegister_v4000, ptr, size, flags);
  PayHostCost(simgpu::GetConfig().host_alloc_host_ns);
  cudaError_t e = simgpu::HostRegister(ptr, size, call.correlation_id());
  if (e == cudaSuccess) simgpu::DeviceBarrier(call.device());
  return call.Finish(e);
}

cudaError_t cudaHostUnregister(void* ptr) {
  SG_API(cudaHostUnregister_v4000, ptr);
  simgpu::SynchronizeAllDevices();
  return call.Finish(simgpu::HostUnregister(ptr, call.correlation_id()));
}

cudaError_t cudaHostGetDevicePointer(void** pDevice, void* pHost, unsigned int flags) {
  SG_API(cudaHostGetDevicePointer_v3020, pDevice, pHost, flags);
  if (pDevice == nullptr || flags != 0) return call.Finish(cudaErrorInvalidValue);
  if (simgpu::ClassifyPointer(pHost).kind != MemKind::kPinned) {
    return call.Finish(cudaErrorInvalidValue);
  }
  *pDevice = pHost;  // unified addressing: the same address on the device
  return call.Finish(cudaSuccess);
}

cudaError_t cudaHostGetFlags(unsigned int* pFlags, void* pHost) {
  SG_API(cudaHostGetFlags_v3020, pFlags, pHost);
  if (pFlags == nullptr) return call.Finish(cudaErrorInvalidValue);
  if (simgpu::ClassifyPointer(pHost).kind != MemKind::kPinned) {
    return call.Finish(cudaErrorInvalidValue);
  }
  *pFlags = cudaHostAllocDefault;
  return call.Finish(cudaSuccess);
}

cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  SG_API(cudaMemGetInfo_v3020, free, total);
  if (free == nullptr || total == nullptr) return call.Finish(cudaErrorInvalidValue);
  simgpu::MemInfo(call.device(), free, total);
  return call.Finish(cudaSuccess);
}

cudaError_t SG_ABI13(cudaPointerGetAttributes)(cudaPointerAttributes* attributes, const void* ptr) {
  SG_API(cudaPointerGetAttributes_v4000, attributes, ptr);
  if (attributes == nullptr) return call.Finish(cudaErrorInvalidValue);
  simgpu::PointerInfo info = simgpu::ClassifyPointer(ptr);
  *attributes = cudaPointerAttributes{};
  switch (info.kind) {
    case MemKind::kDevice:
      attributes->type = cudaMemoryTypeDevice;
      attributes->device = info.device;
      attributes->devicePointer = const_cast<void*>(ptr);
      break;
    case MemKind::kManaged:
      attributes->type = cudaMemoryTypeManaged;
      attributes->device = info.device;
      attributes->devicePointer = attributes->hostPointer = const_cast<void*>(ptr);
      break;
    case MemKind::kPinned:
      attributes->type = cudaMemoryTypeHost;
      attributes->device = call.device();
      attributes->devicePointer = attributes->hostPointer = const_cast<void*>(ptr);
      break;
    case MemKind::kPageable:
      // CUDA >= 11: unregistered host memory is cudaMemoryTypeUnregistered, and success.
      attributes->type = cudaMemoryTypeUnregistered;
      attributes->device = -2;
      break;
  }
  return call.Finish(cudaSuccess);
}

cudaError_t cudaMemcpyPeer(void* dst, int dstDevice, const void* src, int srcDevice, size_t count) {
  SG_API(cudaMemcpyPeer_v4000, dst, dstDevice, src, srcDevice, count);
  if (dstDevice < 0 || dstDevice >= simgpu::DeviceCount() || srcDevice < 0 ||
      srcDevice >= simgpu::DeviceCount()) {
    return call.Finish(cudaErrorInvalidDevice);
  }
  // "Asynchronous with respect to the host, but serialized with respect to all pending and
  // future asynchronous work": submitted on the legacy default stream of the current device.
  simgpu::Stream* s = simgpu::ResolveStream(call.device(), nullptr, false);
  simgpu::CopyArgs a{dst, src, count, 1, 0, 0, cudaMemcpyDeviceToDevice, false, srcDevice, dstDevice};
  bool wait = false;
  std::shared_ptr<simgpu::OpHandle> op;
  return call.Finish(simgpu::SubmitCopy(s, a, call.correlation_id(), &wait, &op));
}

cudaError_t cudaMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice,
                                size_t count, cudaStream_t stream) {
  SG_API(cudaMemcpyPeerAsync_v4000, dst, dstDevice, src, srcDevice, count, stream);
  if (dstDevice < 0 || dstDevice >= simgpu::DeviceCount() || srcDevice < 0 ||
      srcDevice >= simgpu::DeviceCount()) {
    return call.Finish(cudaErrorInvalidDevice);
  }
  simgpu::Stream* s = simgpu::ResolveStream(call.device(), stream, false);
  if (s == nullptr) return call.Finish(cudaErrorInvalidResourceHandle);
  simgpu::CopyArgs a{dst, src, count, 1, 0, 0, cudaMemcpyDeviceToDevice, true, srcDevice, dstDevice};
  bool wait = false;
  std::shared_ptr<simgpu::OpHandle> op;
  return call.Finish(simgpu::SubmitCopy(s, a, call.correlation_id(), &wait, &op));
}

}  // extern "C"
