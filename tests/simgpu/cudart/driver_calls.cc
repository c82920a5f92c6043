// driver_calls.cc — the runtime's nested driver calls (driver_calls.h).
// cupti.h gives the driver cbids and, with its stand-ins for obsolete types, the driver's
// <api>_params structs (generated_cuda_meta.h); nothing links libcupti.
#include "cudart/driver_calls.h"

#include <cupti.h>

#include "driver/api_scope.h"

namespace simgpu {
namespace {

cudaError_t Run(uint32_t cbid, const char* name, const void* params, int device, const char* symbol,
                const DriverWork& work) {
  DriverCall call(cbid, name, params, device, symbol);
  cudaError_t e = work();
  call.Finish(CuResultOf(e));
  return e;
}

#define SG_NESTED(tag, device, symbol, work, ...)                                           \
  do {                                                                                      \
    tag##_params sg_p{__VA_ARGS__};                                                          \
    return Run(CUPTI_DRIVER_TRACE_CBID_##tag, #tag, &sg_p, device, symbol, work);            \
  } while (0)

CUdeviceptr Ptr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }
CUstream Str(cudaStream_t s) { return reinterpret_cast<CUstream>(s); }

}  // namespace

cudaError_t NestedLaunch(const KernelInfo* k, dim3 grid, dim3 block, size_t shared_mem,
                         cudaStream_t stream, void** args, bool per_thread, int device,
                         const DriverWork& work) {
  auto* f = reinterpret_cast<CUfunction>(const_cast<KernelInfo*>(k));
  const char* symbol = k ? k->name.c_str() : nullptr;
  auto shm = static_cast<unsigned>(shared_mem);
  if (per_thread) {
    SG_NESTED(cuLaunchKernel_ptsz, device, symbol, work, f, grid.x, grid.y, grid.z, block.x,
              block.y, block.z, shm, Str(stream), args, nullptr);
  }
  SG_NESTED(cuLaunchKernel, device, symbol, work, f, grid.x, grid.y, grid.z, block.x, block.y,
            block.z, shm, Str(stream), args, nullptr);
}

cudaError_t NestedCopy(void* dst, const void* src, size_t bytes, bool async, cudaStream_t stream,
                       bool per_thread, int device, const DriverWork& work) {
  if (async) {
    if (per_thread) {
      SG_NESTED(cuMemcpyAsync_ptsz, device, nullptr, work, Ptr(dst), Ptr(src), bytes, Str(stream));
    }
    SG_NESTED(cuMemcpyAsync, device, nullptr, work, Ptr(dst), Ptr(src), bytes, Str(stream));
  }
  if (per_thread) SG_NESTED(cuMemcpy_ptds, device, nullptr, work, Ptr(dst), Ptr(src), bytes);
  SG_NESTED(cuMemcpy, device, nullptr, work, Ptr(dst), Ptr(src), bytes);
}

cudaError_t NestedMemset(void* dst, int value, size_t bytes, bool async, cudaStream_t stream,
                         bool per_thread, int device, const DriverWork& work) {
  auto uc = static_cast<unsigned char>(value);
  if (async) {
    if (per_thread) {
      SG_NESTED(cuMemsetD8Async_ptsz, device, nullptr, work, Ptr(dst), uc, bytes, Str(stream));
    }
    SG_NESTED(cuMemsetD8Async, device, nullptr, work, Ptr(dst), uc, bytes, Str(stream));
  }
  if (per_thread) SG_NESTED(cuMemsetD8_v2_ptds, device, nullptr, work, Ptr(dst), uc, bytes);
  SG_NESTED(cuMemsetD8_v2, device, nullptr, work, Ptr(dst), uc, bytes);
}

cudaError_t NestedMemAlloc(void** dptr, size_t bytes, int device, const DriverWork& work) {
  SG_NESTED(cuMemAlloc_v2, device, nullptr, work, reinterpret_cast<CUdeviceptr*>(dptr), bytes);
}

cudaError_t NestedMemFree(void* dptr, int device, const DriverWork& work) {
  SG_NESTED(cuMemFree_v2, device, nullptr, work, Ptr(dptr));
}

cudaError_t NestedHostAlloc(void** p, size_t bytes, unsigned flags, int device,
                            const DriverWork& work) {
  SG_NESTED(cuMemHostAlloc, device, nullptr, work, p, bytes, flags);
}

cudaError_t NestedHostFree(void* p, int device, const DriverWork& work) {
  SG_NESTED(cuMemFreeHost, device, nullptr, work, p);
}

cudaError_t NestedStreamSynchronize(cudaStream_t stream, bool per_thread, int device,
                                    const DriverWork& work) {
  if (per_thread) SG_NESTED(cuStreamSynchronize_ptsz, device, nullptr, work, Str(stream));
  SG_NESTED(cuStreamSynchronize, device, nullptr, work, Str(stream));
}

cudaError_t NestedStreamQuery(cudaStream_t stream, bool per_thread, int device,
                              const DriverWork& work) {
  if (per_thread) SG_NESTED(cuStreamQuery_ptsz, device, nullptr, work, Str(stream));
  SG_NESTED(cuStreamQuery, device, nullptr, work, Str(stream));
}

cudaError_t NestedStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags,
                                  bool per_thread, int device, const DriverWork& work) {
  auto* e = reinterpret_cast<CUevent>(event);
  if (per_thread) {
    SG_NESTED(cuStreamWaitEvent_ptsz, device, nullptr, work, Str(stream), e, flags);
  }
  SG_NESTED(cuStreamWaitEvent, device, nullptr, work, Str(stream), e, flags);
}

cudaError_t NestedCtxSynchronize(int device, const DriverWork& work) {
  // cuCtxSynchronize has no params struct in generated_cuda_meta.h: NULL, as CUPTI passes.
  return Run(CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, "cuCtxSynchronize", nullptr, device,
             nullptr, work);
}

cudaError_t NestedEventRecord(cudaEvent_t event, cudaStream_t stream, bool per_thread, int device,
                              const DriverWork& work) {
  auto* e = reinterpret_cast<CUevent>(event);
  if (per_thread) SG_NESTED(cuEventRecord_ptsz, device, nullptr, work, e, Str(stream));
  SG_NESTED(cuEventRecord, device, nullptr, work, e, Str(stream));
}

cudaError_t NestedEventSynchronize(cudaEvent_t event, int device, const DriverWork& work) {
  SG_NESTED(cuEventSynchronize, device, nullptr, work, reinterpret_cast<CUevent>(event));
}

cudaError_t NestedEventQuery(cudaEvent_t event, int device, const DriverWork& work) {
  SG_NESTED(cuEventQuery, device, nullptr, work, reinterpret_cast<CUevent>(event));
}

}  // namespace simgpu
