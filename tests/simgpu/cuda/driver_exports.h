// driver_exports.h — what the files of simgpu's libcuda.so.1 share (not exported).
#ifndef GPUSTALL_TESTS_SIMGPU_CUDA_DRIVER_EXPORTS_H_
#define GPUSTALL_TESTS_SIMGPU_CUDA_DRIVER_EXPORTS_H_

#include <cuda.h>

#include "driver/driver.h"

namespace simgpu {

CUresult ToCu(cudaError_t e);
// The device whose (primary) context `ctx` is, or -1.
int DeviceOfContext(CUcontext ctx);
// CUresult enumerator name ("CUDA_ERROR_INVALID_VALUE"), or NULL for an unknown code.
const char* CuErrorName(CUresult e);

}  // namespace simgpu

#endif  // GPUSTALL_TESTS_SIMGPU_CUDA_DRIVER_EXPORTS_H_
