// cuda_api_params.h — parameter structs for table entries whose CUPTI cbid has none in the CUDA 13.0
// toolkit's generated_cuda_runtime_api_meta.h.
//
// Why these exist: cuda_api.def evaluates its STREAM/BYTES/... expressions on a params struct, so
// that the interposer (which builds one from its arguments) and the CUPTI callback (which receives
// one as functionParams) share one description of every call.
#ifndef GPUSTALL_AGENT_CAPTURE_CUDA_API_CUDA_API_PARAMS_H_
#define GPUSTALL_AGENT_CAPTURE_CUDA_API_CUDA_API_PARAMS_H_

#include <cuda_runtime_api.h>

// cudaDeviceSynchronize takes no arguments (CUPTI passes no params struct). Outside the extern "C"
// block below: an empty struct has no C layout (size 0 in C, 1 in C++; clang's -Wextern-c-compat).
struct gs_no_params {};

extern "C" {

// __cudaLaunchKernel{,_ptsz} (cbids 505/506, new in CUDA 13). The toolkit ships no params struct;
// this assumes CUPTI passes the arguments in declaration order, as it does for cudaLaunchKernel
// (agent/cupti/NOTES.md §2, unconfirmed on a GPU: §8 U2). The interposer path does not depend on it.
typedef struct gs_cudaLaunchKernel_v13000_params {
  cudaKernel_t kernel;
  dim3 gridDim;
  dim3 blockDim;
  void** args;
  size_t sharedMem;
  cudaStream_t stream;
} gs_cudaLaunchKernel_v13000_params;

}  // extern "C"

#endif  // GPUSTALL_AGENT_CAPTURE_CUDA_API_CUDA_API_PARAMS_H_
