// launch.h — the one kernel-launch path behind cudaLaunchKernel(_ptsz), __cudaLaunchKernel(_ptsz)
// and nvcc's <<<>>> stubs.
#ifndef GPUSTALL_TESTS_SIMGPU_CUDART_LAUNCH_H_
#define GPUSTALL_TESTS_SIMGPU_CUDART_LAUNCH_H_

#include "cudart/api_call.h"

namespace simgpu {

// Validates the configuration like the real runtime (cudaErrorInvalidConfiguration for an
// empty or oversized block/grid, cudaErrorInvalidDeviceFunction for an unknown function) and
// submits the kernel, as the nested driver call cuLaunchKernel(_ptsz) (driver_calls.h). Does not
// call Finish.
cudaError_t LaunchKernel(ApiCall& call, const KernelInfo* kernel, dim3 grid, dim3 block,
                         size_t shared_mem, cudaStream_t stream, bool per_thread_default,
                         void** args = nullptr);

}  // namespace simgpu

#endif  // GPUSTALL_TESTS_SIMGPU_CUDART_LAUNCH_H_
