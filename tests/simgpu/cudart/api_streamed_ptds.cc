// api_streamed_ptds.cc — api_streamed.cc again, as the per-thread-default-stream variants
// (cudaMemcpy_ptds, cudaMemcpyAsync_ptsz, cudaLaunchKernel_ptsz, ...): cuda_runtime_api.h renames
// the functions when CUDA_API_PER_THREAD_DEFAULT_STREAM is defined.
#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1
#define SIMGPU_PTDS_UNIT 1
#include "cudart/api_streamed.cc"  // NOLINT(bugprone-suspicious-include): compiled twice on purpose
