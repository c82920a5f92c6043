// proc_address.cc — cuGetProcAddress (CUDA 12+: cuGetProcAddress_v2; and the CUDA 11.3 form).
//
// As the driver API reference documents it ("cuGetProcAddress", CUDA 13 cuda.h):
//   - `symbol` is the base name without version suffix ("cuMemAlloc", "cuLaunchKernel");
//   - `cudaVersion` selects the ABI: the newest version of the symbol introduced at or before it
//     (cuMemAlloc: 3020 -> cuMemAlloc_v2; cuEventElapsedTime: 12080 -> cuEventElapsedTime_v2);
//   - flags: CU_GET_PROC_ADDRESS_LEGACY_STREAM (1) returns the legacy-default-stream entry point,
//     CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (2) its _ptds/_ptsz variant where there is
//     one; CU_GET_PROC_ADDRESS_DEFAULT (0) means legacy to the driver — cuda.h's inline
//     cuGetProcAddress_v2_ptsz wrapper turns 0 into PER_THREAD in per-thread builds;
//   - not found: *pfn = NULL, CUDA_ERROR_NOT_FOUND, symbolStatus
//     CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND; found only in a newer version than `cudaVersion`:
//     CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT (also CUDA_ERROR_NOT_FOUND).
// It needs no cuInit (the runtime fetches cuInit through it), and is reported to tools
// (CUPTI cbid cuGetProcAddress_v2 = 677; NVIDIA's activity_trace_async sample shows those
// records, pytorch/pytorch#99615) once the driver is initialised.
//
// simgpu's table holds only the entry points simgpu implements, each with the CUDA version that
// introduced that ABI; an older `cudaVersion` asking for an ABI simgpu lacks (the 32-bit
// cuMemAlloc of CUDA 2.x) gets VERSION_NOT_SUFFICIENT where the real driver returns the old one.
#include <cuda.h>
// cupti.h: the driver cbids and, with the stand-ins it declares for obsolete types, the
// <api>_params structs of generated_cuda_meta.h (header only; nothing links libcupti).
#include <cupti.h>

#include <cstring>

#include "cuda/driver_exports.h"
#include "driver/api_scope.h"

#undef cuGetProcAddress
#undef cuEventElapsedTime

extern "C" {
// The per-thread variants (cuda.h declares them only under CUDA_API_PER_THREAD_DEFAULT_STREAM)
// and the pre-13.0 entry points, all defined in api_driver.cc / below.
CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                     unsigned, unsigned, CUstream, void**, void**);
CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig*, CUfunction, void**, void**);
CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr, const void*, size_t);
CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void*, CUdeviceptr, size_t);
CUresult CUDAAPI cuMemcpyDtoD_v2_ptds(CUdeviceptr, CUdeviceptr, size_t);
CUresult CUDAAPI cuMemcpy_ptds(CUdeviceptr, CUdeviceptr, size_t);
CUresult CUDAAPI cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr, const void*, size_t, CUstream);
CUresult CUDAAPI cuMemcpyDtoHAsync_v2_ptsz(void*, CUdeviceptr, size_t, CUstream);
CUresult CUDAAPI cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult CUDAAPI cuMemcpyAsync_ptsz(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult CUDAAPI cuMemsetD8_v2_ptds(CUdeviceptr, unsigned char, size_t);
CUresult CUDAAPI cuMemsetD16_v2_ptds(CUdeviceptr, unsigned short, size_t);
CUresult CUDAAPI cuMemsetD32_v2_ptds(CUdeviceptr, unsigned int, size_t);
CUresult CUDAAPI cuMemsetD8Async_ptsz(CUdeviceptr, unsigned char, size_t, CUstream);
CUresult CUDAAPI cuMemsetD16Async_ptsz(CUdeviceptr, unsigned short, size_t, CUstream);
CUresult CUDAAPI cuMemsetD32Async_ptsz(CUdeviceptr, unsigned int, size_t, CUstream);
CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream);
CUresult CUDAAPI cuStreamQuery_ptsz(CUstream);
CUresult CUDAAPI cuStreamWaitEvent_ptsz(CUstream, CUevent, unsigned);
CUresult CUDAAPI cuEventRecord_ptsz(CUevent, CUstream);
CUresult CUDAAPI cuEventElapsedTime(float*, CUevent, CUevent);
CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags);
}

namespace simgpu {
namespace {

struct ProcEntry {
  const char* symbol;  // base name
  int version;         // CUDA version that introduced this ABI
  void* legacy;        // legacy default stream (or no stream semantics)
  void* per_thread;    // _ptds/_ptsz variant, or NULL (then `legacy` serves both)
};

#define SG_FN(f) reinterpret_cast<void*>(&f)
const ProcEntry kProcs[] = {
    {"cuInit", 2000, SG_FN(cuInit), nullptr},
    {"cuDriverGetVersion", 2020, SG_FN(cuDriverGetVersion), nullptr},
    {"cuDeviceGet", 2000, SG_FN(cuDeviceGet), nullptr},
    {"cuDeviceGetCount", 2000, SG_FN(cuDeviceGetCount), nullptr},
    {"cuDeviceGetName", 2000, SG_FN(cuDeviceGetName), nullptr},
    {"cuDeviceGetAttribute", 2000, SG_FN(cuDeviceGetAttribute), nullptr},
    {"cuDeviceTotalMem", 3020, SG_FN(cuDeviceTotalMem_v2), nullptr},
    {"cuDevicePrimaryCtxRetain", 7000, SG_FN(cuDevicePrimaryCtxRetain), nullptr},
    {"cuDevicePrimaryCtxRelease", 11000, SG_FN(cuDevicePrimaryCtxRelease_v2), nullptr},
    {"cuCtxGetCurrent", 4000, SG_FN(cuCtxGetCurrent), nullptr},
    {"cuCtxSetCurrent", 4000, SG_FN(cuCtxSetCurrent), nullptr},
    {"cuCtxGetDevice", 2000, SG_FN(cuCtxGetDevice), nullptr},
    {"cuCtxSynchronize", 2000, SG_FN(cuCtxSynchronize), nullptr},
    {"cuModuleLoadData", 2000, SG_FN(cuModuleLoadData), nullptr},
    {"cuModuleLoadDataEx", 2010, SG_FN(cuModuleLoadDataEx), nullptr},
    {"cuModuleUnload", 2000, SG_FN(cuModuleUnload), nullptr},
    {"cuModuleGetFunction", 2000, SG_FN(cuModuleGetFunction), nullptr},
    {"cuFuncGetAttribute", 2020, SG_FN(cuFuncGetAttribute), nullptr},
    {"cuFuncSetAttribute", 9000, SG_FN(cuFuncSetAttribute), nullptr},
    {"cuFuncSetCacheConfig", 3000, SG_FN(cuFuncSetCacheConfig), nullptr},
    {"cuLaunchKernel", 4000, SG_FN(cuLaunchKernel), SG_FN(cuLaunchKernel_ptsz)},
    {"cuLaunchKernelEx", 11060, SG_FN(cuLaunchKernelEx), SG_FN(cuLaunchKernelEx_ptsz)},
    {"cuMemAlloc", 3020, SG_FN(cuMemAlloc_v2), nullptr},
    {"cuMemFree", 3020, SG_FN(cuMemFree_v2), nullptr},
    {"cuMemGetInfo", 3020, SG_FN(cuMemGetInfo_v2), nullptr},
    {"cuMemGetAllocationGranularity", 10020, SG_FN(cuMemGetAllocationGranularity), nullptr},
    {"cuMemAddressReserve", 10020, SG_FN(cuMemAddressReserve), nullptr},
    {"cuMemAddressFree", 10020, SG_FN(cuMemAddressFree), nullptr},
    {"cuMemCreate", 10020, SG_FN(cuMemCreate), nullptr},
    {"cuMemRelease", 10020, SG_FN(cuMemRelease), nullptr},
    {"cuMemMap", 10020, SG_FN(cuMemMap), nullptr},
    {"cuMemUnmap", 10020, SG_FN(cuMemUnmap), nullptr},
    {"cuMemSetAccess", 10020, SG_FN(cuMemSetAccess), nullptr},
    {"cuPointerGetAttribute", 4000, SG_FN(cuPointerGetAttribute), nullptr},
    {"cuMemAllocHost", 3020, SG_FN(cuMemAllocHost_v2), nullptr},
    {"cuMemHostAlloc", 2020, SG_FN(cuMemHostAlloc), nullptr},
    {"cuMemFreeHost", 2000, SG_FN(cuMemFreeHost), nullptr},
    {"cuMemcpyHtoD", 3020, SG_FN(cuMemcpyHtoD_v2), SG_FN(cuMemcpyHtoD_v2_ptds)},
    {"cuMemcpyDtoH", 3020, SG_FN(cuMemcpyDtoH_v2), SG_FN(cuMemcpyDtoH_v2_ptds)},
    {"cuMemcpyDtoD", 3020, SG_FN(cuMemcpyDtoD_v2), SG_FN(cuMemcpyDtoD_v2_ptds)},
    {"cuMemcpy", 4000, SG_FN(cuMemcpy), SG_FN(cuMemcpy_ptds)},
    {"cuMemcpyHtoDAsync", 3020, SG_FN(cuMemcpyHtoDAsync_v2), SG_FN(cuMemcpyHtoDAsync_v2_ptsz)},
    {"cuMemcpyDtoHAsync", 3020, SG_FN(cuMemcpyDtoHAsync_v2), SG_FN(cuMemcpyDtoHAsync_v2_ptsz)},
    {"cuMemcpyDtoDAsync", 3020, SG_FN(cuMemcpyDtoDAsync_v2), SG_FN(cuMemcpyDtoDAsync_v2_ptsz)},
    {"cuMemcpyAsync", 4000, SG_FN(cuMemcpyAsync), SG_FN(cuMemcpyAsync_ptsz)},
    {"cuMemsetD8", 3020, SG_FN(cuMemsetD8_v2), SG_FN(cuMemsetD8_v2_ptds)},
    {"cuMemsetD16", 3020, SG_FN(cuMemsetD16_v2), SG_FN(cuMemsetD16_v2_ptds)},
    {"cuMemsetD32", 3020, SG_FN(cuMemsetD32_v2), SG_FN(cuMemsetD32_v2_ptds)},
    {"cuMemsetD8Async", 3020, SG_FN(cuMemsetD8Async), SG_FN(cuMemsetD8Async_ptsz)},
    {"cuMemsetD16Async", 3020, SG_FN(cuMemsetD16Async), SG_FN(cuMemsetD16Async_ptsz)},
    {"cuMemsetD32Async", 3020, SG_FN(cuMemsetD32Async), SG_FN(cuMemsetD32Async_ptsz)},
    {"cuStreamCreate", 2000, SG_FN(cuStreamCreate), nullptr},
    {"cuStreamCreateWithPriority", 5050, SG_FN(cuStreamCreateWithPriority), nullptr},
    {"cuStreamDestroy", 4000, SG_FN(cuStreamDestroy_v2), nullptr},
    {"cuStreamSynchronize", 2000, SG_FN(cuStreamSynchronize), SG_FN(cuStreamSynchronize_ptsz)},
    {"cuStreamQuery", 2000, SG_FN(cuStreamQuery), SG_FN(cuStreamQuery_ptsz)},
    {"cuStreamWaitEvent", 3020, SG_FN(cuStreamWaitEvent), SG_FN(cuStreamWaitEvent_ptsz)},
    {"cuEventCreate", 2000, SG_FN(cuEventCreate), nullptr},
    {"cuEventRecord", 2000, SG_FN(cuEventRecord), SG_FN(cuEventRecord_ptsz)},
    {"cuEventQuery", 2000, SG_FN(cuEventQuery), nullptr},
    {"cuEventSynchronize", 2000, SG_FN(cuEventSynchronize), nullptr},
    {"cuEventDestroy", 4000, SG_FN(cuEventDestroy_v2), nullptr},
    {"cuEventElapsedTime", 2000, SG_FN(cuEventElapsedTime), nullptr},
    {"cuEventElapsedTime", 12080, SG_FN(cuEventElapsedTime_v2), nullptr},
    {"cuGetProcAddress", 11030, SG_FN(cuGetProcAddress), nullptr},
    {"cuGetProcAddress", 12000, SG_FN(cuGetProcAddress_v2), nullptr},
    {"cuGetErrorName", 6000, SG_FN(cuGetErrorName), nullptr},
    {"cuGetErrorString", 6000, SG_FN(cuGetErrorString), nullptr},
};
#undef SG_FN

CUresult Lookup(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                CUdriverProcAddressQueryResult* status) {
  if (symbol == nullptr || pfn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if ((flags & ~static_cast<cuuint64_t>(CU_GET_PROC_ADDRESS_LEGACY_STREAM |
                                         CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  const ProcEntry* best = nullptr;
  bool known = false;
  for (const ProcEntry& e : kProcs) {
    if (std::strcmp(e.symbol, symbol) != 0) continue;
    known = true;
    if (e.version <= cuda_version && (best == nullptr || e.version > best->version)) best = &e;
  }
  *pfn = nullptr;
  if (best == nullptr) {
    if (status) {
      *status = known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                      : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    }
    return CUDA_ERROR_NOT_FOUND;
  }
  *pfn = per_thread && best->per_thread ? best->per_thread : best->legacy;
  if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace simgpu

extern "C" {

CUresult CUDAAPI cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion,
                                     cuuint64_t flags, CUdriverProcAddressQueryResult* symbolStatus) {
  if (!simgpu::DriverInitialized()) {
    return simgpu::Lookup(symbol, pfn, cudaVersion, flags, symbolStatus);
  }
  cuGetProcAddress_v2_params params{symbol, pfn, cudaVersion, flags, symbolStatus};
  simgpu::DriverCall call(CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2, "cuGetProcAddress_v2",
                          &params, simgpu::BoundContextDevice());
  return static_cast<CUresult>(
      call.Finish(simgpu::Lookup(symbol, pfn, cudaVersion, flags, symbolStatus)));
}

CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion,
                                  cuuint64_t flags) {
  if (!simgpu::DriverInitialized()) {
    return simgpu::Lookup(symbol, pfn, cudaVersion, flags, nullptr);
  }
  cuGetProcAddress_params params{symbol, pfn, cudaVersion, flags};
  simgpu::DriverCall call(CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress, "cuGetProcAddress", &params,
                          simgpu::BoundContextDevice());
  return static_cast<CUresult>(call.Finish(simgpu::Lookup(symbol, pfn, cudaVersion, flags, nullptr)));
}

}  // extern "C"
