// fake_nvcc.h — registers and launches "kernels" exactly the way nvcc 13's generated host code
// does (see crt/host_runtime.h), without needing nvcc: tests can then exercise the registration
// path, the mangled/demangled naming and __cudaLaunchKernel on any machine.
#ifndef GPUSTALL_TESTS_SIMGPU_TESTS_FAKE_NVCC_H_
#define GPUSTALL_TESTS_SIMGPU_TESTS_FAKE_NVCC_H_

#include <cuda_runtime_api.h>

extern "C" {
void** __cudaRegisterFatBinary(void* fatCubin);
void __cudaRegisterFatBinaryEnd(void** fatCubinHandle);
void __cudaRegisterFunction(void** fatCubinHandle, const char* hostFun, char* deviceFun,
                            const char* deviceName, int thread_limit, uint3* tid, uint3* bid,
                            dim3* bDim, dim3* gDim, int* wSize);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                     struct CUstream_st* stream);
cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem,
                                       void* stream);
cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* hostFun);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                               size_t sharedMem, cudaStream_t stream);
}

namespace simgpu_test {

// What a translation unit's static constructor does for one __global__ function.
inline void RegisterKernel(const void* host_stub, const char* mangled_name) {
  static char fake_fatbin[16];
  void** handle = __cudaRegisterFatBinary(fake_fatbin);
  __cudaRegisterFunction(handle, static_cast<const char*>(host_stub),
                         const_cast<char*>(mangled_name), mangled_name, -1, nullptr, nullptr,
                         nullptr, nullptr, nullptr);
  __cudaRegisterFatBinaryEnd(handle);
}

// What `kernel<<<grid, block, 0, stream>>>()` expands to.
inline cudaError_t TripleChevron(const void* host_stub, dim3 grid, dim3 block, cudaStream_t stream) {
  __cudaPushCallConfiguration(grid, block, 0, stream);
  cudaKernel_t handle = nullptr;
  if (__cudaGetKernel(&handle, host_stub) != cudaSuccess) return cudaErrorInvalidDeviceFunction;
  dim3 g, b;
  size_t shmem;
  cudaStream_t s;
  if (__cudaPopCallConfiguration(&g, &b, &shmem, &s) != cudaSuccess) return cudaErrorUnknown;
  void* args[1] = {nullptr};
  return __cudaLaunchKernel(handle, g, b, args, shmem, s);
}

}  // namespace simgpu_test

#endif  // GPUSTALL_TESTS_SIMGPU_TESTS_FAKE_NVCC_H_
