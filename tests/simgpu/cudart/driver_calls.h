// driver_calls.h — the driver calls simgpu's runtime makes inside its own calls.
//
// The runtime sits on the driver: a runtime call that does device work reports, inside its own
// API_ENTER/API_EXIT, the driver call that does it (CUPTI's DRIVER_API domain), with the runtime
// call's correlation id (api_scope.h; facts and sources: tests/simgpu/CUPTI_CORRELATION.md).
// Which public driver function NVIDIA's cudart reports for each runtime function is not
// documented; simgpu reports the driver function with the same semantics:
//   cudaLaunchKernel, __cudaLaunchKernel, <<<>>>, cudaLaunchKernelExC   cuLaunchKernel(_ptsz)
//   cudaMemcpyAsync family (1-D)                    cuMemcpyAsync(_ptsz)
//   cudaMemcpy family (1-D)                         cuMemcpy(_ptds)
//   cudaMemsetAsync / cudaMemset (1-D)              cuMemsetD8Async(_ptsz) / cuMemsetD8_v2(_ptds)
//   cudaMalloc / cudaFree                           cuMemAlloc_v2 / cuMemFree_v2
//   cudaMallocHost, cudaHostAlloc / cudaFreeHost    cuMemHostAlloc / cuMemFreeHost
//   cudaStreamSynchronize, cudaDeviceSynchronize    cuStreamSynchronize(_ptsz), cuCtxSynchronize
//   cudaEventRecord, cudaEventSynchronize, cudaEventQuery   cuEventRecord(_ptsz), cuEventSynchronize, cuEventQuery
//   cudaStreamWaitEvent, cudaStreamQuery            cuStreamWaitEvent(_ptsz), cuStreamQuery(_ptsz)
//   cudaGetDriverEntryPoint(ByVersion)              cuGetProcAddress_v2 (a real call into
//                                                   libcuda.so.1, api_streamed.cc)
// Each takes the work as a callable returning cudaError_t and reports that result as a CUresult.
#ifndef GPUSTALL_TESTS_SIMGPU_CUDART_DRIVER_CALLS_H_
#define GPUSTALL_TESTS_SIMGPU_CUDART_DRIVER_CALLS_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <type_traits>

#include "driver/driver.h"

namespace simgpu {

// A non-owning reference to the work (a lambda that lives for the whole call): no allocation on
// the launch path.
class DriverWork {
 public:
  template <typename F,
            typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, DriverWork>>>
  DriverWork(F&& f)  // NOLINT(google-explicit-constructor): lambdas convert implicitly
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o) -> cudaError_t { return (*static_cast<std::remove_reference_t<F>*>(o))(); }) {}
  cudaError_t operator()() const { return call_(object_); }

 private:
  void* object_;
  cudaError_t (*call_)(void*);
};

cudaError_t NestedLaunch(const KernelInfo* k, dim3 grid, dim3 block, size_t shared_mem,
                         cudaStream_t stream, void** args, bool per_thread, int device,
                         const DriverWork& work);
cudaError_t NestedCopy(void* dst, const void* src, size_t bytes, bool async, cudaStream_t stream,
                       bool per_thread, int device, const DriverWork& work);
cudaError_t NestedMemset(void* dst, int value, size_t bytes, bool async, cudaStream_t stream,
                         bool per_thread, int device, const DriverWork& work);
cudaError_t NestedMemAlloc(void** dptr, size_t bytes, int device, const DriverWork& work);
cudaError_t NestedMemFree(void* dptr, int device, const DriverWork& work);
cudaError_t NestedHostAlloc(void** p, size_t bytes, unsigned flags, int device,
                            const DriverWork& work);
cudaError_t NestedHostFree(void* p, int device, const DriverWork& work);
cudaError_t NestedStreamSynchronize(cudaStream_t stream, bool per_thread, int device,
                                    const DriverWork& work);
cudaError_t NestedStreamQuery(cudaStream_t stream, bool per_thread, int device,
                              const DriverWork& work);
cudaError_t NestedStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags,
                                  bool per_thread, int device, const DriverWork& work);
cudaError_t NestedCtxSynchronize(int device, const DriverWork& work);
cudaError_t NestedEventRecord(cudaEvent_t event, cudaStream_t stream, bool per_thread, int device,
                              const DriverWork& work);
cudaError_t NestedEventSynchronize(cudaEvent_t event, int device, const DriverWork& work);
cudaError_t NestedEventQuery(cudaEvent_t event, int device, const DriverWork& work);

}  // namespace simgpu

#endif  // GPUSTALL_TESTS_SIMGPU_CUDART_DRIVER_CALLS_H_
