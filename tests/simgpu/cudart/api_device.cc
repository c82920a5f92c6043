// api_device.cc — devices, versions, errors, device-wide synchronisation.
#include <cstdio>
#include <cstring>

#include "cudart/abi13.h"
#include "cudart/api_call.h"
#include "cudart/driver_calls.h"

using simgpu::ApiCall;

namespace {

bool ValidDevice(int d) { return d >= 0 && d < simgpu::DeviceCount(); }

void FillProperties(cudaDeviceProp* p, int device) { simgpu::FillDeviceProperties(p, device); }

bool Attribute(cudaDeviceAttr attr, int device, int* value) {
  return simgpu::DeviceAttribute(static_cast<int>(attr), device, value);
}

}  // namespace

extern "C" {

cudaError_t cudaGetDeviceCount(int* count) {
  SG_API_NOSTICKY(cudaGetDeviceCount_v3020, count);
  if (count == nullptr) return call.Finish(cudaErrorInvalidValue);
  *count = simgpu::DeviceCount();
  return call.Finish(*count > 0 ? cudaSuccess : cudaErrorNoDevice);
}

cudaError_t cudaGetDevice(int* device) {
  SG_API_NOSTICKY(cudaGetDevice_v3020, device);
  if (device == nullptr) return call.Finish(cudaErrorInvalidValue);
  *device = simgpu::CurrentDevice();
  return call.Finish(cudaSuccess);
}

cudaError_t cudaSetDevice(int device) {
  SG_API_NOSTICKY(cudaSetDevice_v3020, device);
  if (!ValidDevice(device)) return call.Finish(cudaErrorInvalidDevice);
  // Since CUDA 12 cudaSetDevice makes the device's primary context current at once (runtime API
  // reference, cudaSetDevice); the driver API sees it (cuCtxGetCurrent).
  simgpu::BindContext(device);
  return call.Finish(simgpu::StickyError(device));
}

cudaError_t cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags) {
  SG_API_NOSTICKY(cudaInitDevice_v12000, device, deviceFlags, flags);
  return call.Finish(ValidDevice(device) ? cudaSuccess : cudaErrorInvalidDevice);
}

cudaError_t cudaSetDeviceFlags(unsigned int flags) {
  SG_API(cudaSetDeviceFlags_v3020, flags);
  simgpu::SetHostWaitsBlock((flags & cudaDeviceScheduleMask) == cudaDeviceScheduleBlockingSync);
  return call.Finish(cudaSuccess);
}

cudaError_t cudaGetDeviceFlags(unsigned int* flags) {
  SG_API(cudaGetDeviceFlags_v7000, flags);
  if (flags == nullptr) return call.Finish(cudaErrorInvalidValue);
  *flags = cudaDeviceMapHost;
  return call.Finish(cudaSuccess);
}

cudaError_t SG_ABI13(cudaGetDeviceProperties)(cudaDeviceProp* prop, int device) {
  SG_API_NOSTICKY(cudaGetDeviceProperties_v12000, prop, device);
  if (prop == nullptr) return call.Finish(cudaErrorInvalidValue);
  if (!ValidDevice(device)) return call.Finish(cudaErrorInvalidDevice);
  FillProperties(prop, device);
  return call.Finish(cudaSuccess);
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  SG_API_NOSTICKY(cudaDeviceGetAttribute_v5000, value, attr, device);
  if (value == nullptr) return call.Finish(cudaErrorInvalidValue);
  if (!ValidDevice(device)) return call.Finish(cudaErrorInvalidDevice);
  if (!Attribute(attr, device, value)) *value = 0;  // unmodelled attributes read as 0
  return call.Finish(cudaSuccess);
}

cudaError_t cudaDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
  SG_API(cudaDeviceGetStreamPriorityRange_v5050, leastPriority, greatestPriority);
  if (leastPriority) *leastPriority = 0;
  if (greatestPriority) *greatestPriority = -5;
  return call.Finish(cudaSuccess);
}

cudaError_t cudaDeviceGetPCIBusId(char* pciBusId, int len, int device) {
  SG_API(cudaDeviceGetPCIBusId_v4010, pciBusId, len, device);
  if (pciBusId == nullptr || len <= 0) return call.Finish(cudaErrorInvalidValue);
  if (!ValidDevice(device)) return call.Finish(cudaErrorInvalidDevice);
  std::snprintf(pciBusId, static_cast<size_t>(len), "0000:%02x:00.0", device + 1);
  return call.Finish(cudaSuccess);
}

cudaError_t cudaDeviceGetLimit(size_t* pValue, cudaLimit limit) {
  SG_API(cudaDeviceGetLimit_v3020, pValue, limit);
  if (pValue == nullptr) return call.Finish(cudaErrorInvalidValue);
  switch (limit) {
    case cudaLimitStackSize: *pValue = 1024; break;
    case cudaLimitPrintfFifoSize: *pValue = 1 << 20; break;
    case cudaLimitMallocHeapSize: *pValue = 8 << 20; break;
    default: *pValue = 0; break;
  }
  return call.Finish(cudaSuccess);
}

cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value) {
  SG_API(cudaDeviceSetLimit_v3020, limit, value);
  return call.Finish(cudaSuccess);
}

cudaError_t cudaDeviceCanAccessPeer(int* canAccessPeer, int device, int peerDevice) {
  SG_API(cudaDeviceCanAccessPeer_v4000, canAccessPeer, device, peerDevice);
  if (canAccessPeer == nullptr) return call.Finish(cudaErrorInvalidValue);
  if (!ValidDevice(device) || !ValidDevice(peerDevice)) return call.Finish(cudaErrorInvalidDevice);
  *canAccessPeer = device != peerDevice;
  return call.Finish(cudaSuccess);
}

cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags) {
  SG_API(cudaDeviceEnablePeerAccess_v4000, peerDevice, flags);
  if (!ValidDevice(peerDevice)) return call.Finish(cudaErrorInvalidDevice);
  return call.Finish(cudaSuccess);
}

cudaError_t cudaDeviceDisablePeerAccess(int peerDevice) {
  SG_API(cudaDeviceDisablePeerAccess_v4000, peerDevice);
  if (!ValidDevice(peerDevice)) return call.Finish(cudaErrorInvalidDevice);
  return call.Finish(cudaSuccess);
}

cudaError_t cudaDeviceSynchronize(void) {
  SG_API0(cudaDeviceSynchronize_v3020);
  return call.Finish(simgpu::NestedCtxSynchronize(call.device(), [&]() -> cudaError_t {
    uint64_t start = simgpu::NowNs();
    cudaError_t e = simgpu::SynchronizeDevice(call.device());
    simgpu::RecordSync(4 /* CONTEXT_SYNCHRONIZE */, call.device(), nullptr, nullptr, start,
                       simgpu::NowNs(), call.correlation_id());
    return e;
  }));
}

cudaError_t cudaDeviceReset(void) {
  SG_API0(cudaDeviceReset_v3020);
  simgpu::ResetDevice(call.device());
  return call.Finish(cudaSuccess);
}

cudaError_t cudaRuntimeGetVersion(int* runtimeVersion) {
  // Needs no driver (it works on machines without one); still reported to an installed tool.
  cudaRuntimeGetVersion_v3020_params sg_params{runtimeVersion};
  ApiCall call(CUPTI_RUNTIME_TRACE_CBID_cudaRuntimeGetVersion_v3020, "cudaRuntimeGetVersion_v3020",
               &sg_params, ApiCall::kNothing);
  if (runtimeVersion == nullptr) return call.Finish(cudaErrorInvalidValue);
  // The CUDA 12 flavour is 12.9's library (cudart/abi13.h); libcudart.so.13 the headers' release.
#if defined(SIMGPU_CUDART_MAJOR) && SIMGPU_CUDART_MAJOR == 12
  *runtimeVersion = 12090;
#else
  *runtimeVersion = CUDART_VERSION;
#endif
  return call.Finish(cudaSuccess);
}

cudaError_t cudaDriverGetVersion(int* driverVersion) {
  cudaDriverGetVersion_v3020_params sg_params{driverVersion};
  ApiCall call(CUPTI_RUNTIME_TRACE_CBID_cudaDriverGetVersion_v3020, "cudaDriverGetVersion_v3020",
               &sg_params, ApiCall::kNothing);
  if (driverVersion == nullptr) return call.Finish(cudaErrorInvalidValue);
  *driverVersion = 13000;
  return call.Finish(cudaSuccess);
}

cudaError_t cudaGetLastError(void) {
  // Reported like any call, but never fails early: it is how programs read the errors.
  ApiCall call(CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020, "cudaGetLastError_v3020", nullptr,
               ApiCall::kInitOnly);
  cudaError_t sticky = simgpu::StickyError(simgpu::CurrentDevice());
  cudaError_t e = sticky != cudaSuccess ? sticky : simgpu::LastError();
  if (sticky == cudaSuccess) simgpu::LastError() = cudaSuccess;  // a sticky error stays
  return call.FinishReadingError(e);
}

cudaError_t cudaPeekAtLastError(void) {
  ApiCall call(CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020, "cudaPeekAtLastError_v3020",
               nullptr, ApiCall::kInitOnly);
  cudaError_t sticky = simgpu::StickyError(simgpu::CurrentDevice());
  return call.FinishReadingError(sticky != cudaSuccess ? sticky : simgpu::LastError());
}

cudaError_t cudaGetSymbolAddress(void** devPtr, const void* symbol) {
  SG_API(cudaGetSymbolAddress_v3020, devPtr, symbol);
  if (devPtr == nullptr) return call.Finish(cudaErrorInvalidValue);
  return call.Finish(simgpu::SymbolAddress(symbol, devPtr, nullptr));
}

cudaError_t cudaGetSymbolSize(size_t* size, const void* symbol) {
  SG_API(cudaGetSymbolSize_v3020, size, symbol);
  if (size == nullptr) return call.Finish(cudaErrorInvalidValue);
  return call.Finish(simgpu::SymbolAddress(symbol, nullptr, size));
}

cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode) {
  SG_API(cudaThreadExchangeStreamCaptureMode_v10010, mode);
  if (mode == nullptr) return call.Finish(cudaErrorInvalidValue);
  static thread_local cudaStreamCaptureMode current = cudaStreamCaptureModeGlobal;
  cudaStreamCaptureMode previous = current;
  current = *mode;
  *mode = previous;
  return call.Finish(cudaSuccess);
}

cudaError_t cudaProfilerStart(void) {
  SG_API0(cudaProfilerStart_v4000);
  return call.Finish(cudaSuccess);
}

cudaError_t cudaProfilerStop(void) {
  SG_API0(cudaProfilerStop_v4000);
  return call.Finish(cudaSuccess);
}

const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
#define SG_ERROR(name) \
  case name:           \
    return #name;
#include "cudart/error_names.inc"
#undef SG_ERROR
    default:
      return "cudaErrorUnknown";
  }
}

const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInitializationError: return "initialization error";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidPitchValue: return "invalid pitch argument";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorNotSupported: return "operation not supported";
    case cudaErrorHostMemoryAlreadyRegistered:
      return "part or all of the requested memory range is already mapped";
    case cudaErrorHostMemoryNotRegistered: return "pointer does not correspond to a registered memory region";
    case cudaErrorInvalidSymbol: return "invalid device symbol";
    default: return cudaGetErrorName(error);
  }
}

}  // extern "C"

extern "C" cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w,
                                                       cudaChannelFormatKind f) {
  return cudaChannelFormatDesc{x, y, z, w, f};
}
