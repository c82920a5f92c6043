// gemm_library.h — a GPU math library as cuBLAS and cuDNN reach the driver: it asks the driver
// for its entry points with cuGetProcAddress (dlopen'd libcuda.so.1's only symbol it uses) and
// calls the pointers it gets, so no cu* call of its own goes through a symbol a profiler could
// interpose. Its "GEMM" is the three kernels of tests/workloads/cubin/compiled_model_kernels.cu,
// loaded with cuModuleLoadData and launched with cuLaunchKernel on the caller's stream.
//
// Thread safety: Init once, then Forward from any thread.
#ifndef GPUSTALL_TESTS_WORKLOADS_CPP_GEMM_LIBRARY_H_
#define GPUSTALL_TESTS_WORKLOADS_CPP_GEMM_LIBRARY_H_

#include <cstdint>

extern "C" {

// Loads libcuda.so.1, fetches the entry points and the module at `cubin_path` into the calling
// thread's current context. 0 on success; else prints why on stderr and returns non-zero.
int gemm_library_init(const char* cubin_path);

// Launches the library's kernels on `stream` (a cudaStream_t or CUstream) over n floats of
// x, y and out (device pointers). 0 on success.
int gemm_library_forward(void* stream, uint64_t x, uint64_t y, uint64_t out, int n);

}  // extern "C"

#endif  // GPUSTALL_TESTS_WORKLOADS_CPP_GEMM_LIBRARY_H_
