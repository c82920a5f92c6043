// driver_program.cc — a JIT-launcher-shaped program on simgpu's libcuda.so.1 (and one runtime
// launch through libcudart.so.13): cuGetProcAddress, cuInit, the primary context,
// cuModuleLoadData on a real cubin, cuLaunchKernel (through the cuGetProcAddress pointer, the way
// cuBLAS calls the driver) and cuLaunchKernelEx (the way Triton's launcher does), copies, a
// memset, events. driver_truth_test.cc runs it and checks the truth log it leaves.
// Exit status 0: every call returned what the driver API reference says it returns.
// Usage: driver_program <cubin> [<fatbin>]
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstring>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "simgpu.h"

namespace {

int g_failures = 0;

#define EXPECT_CU(call, want)                                                          \
  do {                                                                                 \
    CUresult got_ = (call);                                                            \
    if (got_ != (want)) {                                                              \
      std::fprintf(stderr, "%s:%d: %s returned %d, expected %d\n", __FILE__, __LINE__, \
                   #call, static_cast<int>(got_), static_cast<int>(want));             \
      ++g_failures;                                                                    \
    }                                                                                  \
  } while (0)
#define EXPECT_TRUE(cond)                                                               \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);          \
      ++g_failures;                                                                     \
    }                                                                                   \
  } while (0)

// The libcuda.so.1 symbol a pointer handed out by cuGetProcAddress is (dladdr), or "".
std::string SymbolOf(void* fn) {
  Dl_info info{};
  if (fn == nullptr || dladdr(fn, &info) == 0 || info.dli_sname == nullptr ||
      info.dli_fname == nullptr || std::strstr(info.dli_fname, "libcuda.so") == nullptr) {
    return "";
  }
  return info.dli_sname;
}

using LaunchKernelFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                    unsigned, unsigned, CUstream, void**, void**);

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: driver_program <cubin> [<fatbin>]\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<char> cubin((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (cubin.empty()) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }

  // Before cuInit: only cuGetProcAddress / cuDriverGetVersion answer.
  int count = -1;
  EXPECT_CU(cuDeviceGetCount(&count), CUDA_ERROR_NOT_INITIALIZED);
  CUdriverProcAddressQueryResult status;
  void* fn = nullptr;
  EXPECT_CU(cuGetProcAddress("cuInit", &fn, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &status),
            CUDA_SUCCESS);
  EXPECT_TRUE(SymbolOf(fn) == "cuInit" && status == CU_GET_PROC_ADDRESS_SUCCESS);

  EXPECT_CU(reinterpret_cast<CUresult (*)(unsigned)>(fn)(0), CUDA_SUCCESS);
  EXPECT_CU(cuDeviceGetCount(&count), CUDA_SUCCESS);
  EXPECT_TRUE(count == 1);
  int version = 0;
  EXPECT_CU(cuDriverGetVersion(&version), CUDA_SUCCESS);
  EXPECT_TRUE(version == CUDA_VERSION);

  // Entry points as a library fetches them: versioned and per-thread variants.
  void* launch = nullptr;
  EXPECT_CU(cuGetProcAddress("cuLaunchKernel", &launch, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &status),
            CUDA_SUCCESS);
  EXPECT_TRUE(SymbolOf(launch) == "cuLaunchKernel");
  void* launch_pt = nullptr;
  EXPECT_CU(cuGetProcAddress("cuLaunchKernel", &launch_pt, 12000,
                             CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &status),
            CUDA_SUCCESS);
  EXPECT_TRUE(SymbolOf(launch_pt) == "cuLaunchKernel_ptsz");
  void* alloc = nullptr;
  EXPECT_CU(cuGetProcAddress("cuMemAlloc", &alloc, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &status),
            CUDA_SUCCESS);
  EXPECT_TRUE(SymbolOf(alloc) == "cuMemAlloc_v2");  // the ABI cuda.h's cuMemAlloc names
  void* missing = &count;
  EXPECT_CU(cuGetProcAddress("cuNoSuchFunction", &missing, 13000, 0, &status), CUDA_ERROR_NOT_FOUND);
  EXPECT_TRUE(missing == nullptr && status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  EXPECT_CU(cuGetProcAddress("cuLaunchKernelEx", &missing, 11000, 0, &status), CUDA_ERROR_NOT_FOUND);
  EXPECT_TRUE(status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);

  // No context until one is made current (a JIT launcher checks, then retains the primary one).
  CUcontext ctx = reinterpret_cast<CUcontext>(&count);
  EXPECT_CU(cuCtxGetCurrent(&ctx), CUDA_SUCCESS);
  EXPECT_TRUE(ctx == nullptr);
  CUdeviceptr none = 0;
  EXPECT_CU(cuMemAlloc(&none, 64), CUDA_ERROR_INVALID_CONTEXT);
  CUdevice dev = -1;
  EXPECT_CU(cuDeviceGet(&dev, 0), CUDA_SUCCESS);
  char name[64] = {};
  EXPECT_CU(cuDeviceGetName(name, sizeof name, dev), CUDA_SUCCESS);
  int major = 0;
  EXPECT_CU(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
            CUDA_SUCCESS);
  EXPECT_TRUE(major == 9);
  EXPECT_CU(cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
  EXPECT_CU(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
  CUcontext current = nullptr;
  EXPECT_CU(cuCtxGetCurrent(&current), CUDA_SUCCESS);
  EXPECT_TRUE(current == ctx);

  // The module: kernels by their cubin symbol names; a device function is not one.
  CUmodule module = nullptr;
  EXPECT_CU(cuModuleLoadData(&module, cubin.data()), CUDA_SUCCESS);
  CUfunction add = nullptr, scale = nullptr, helper = nullptr;
  EXPECT_CU(cuModuleGetFunction(&add, module, "triton_add"), CUDA_SUCCESS);
  EXPECT_CU(cuModuleGetFunction(&scale, module, "_Z5scalePffi"), CUDA_SUCCESS);
  EXPECT_CU(cuModuleGetFunction(&helper, module, "_Z6helperff"), CUDA_ERROR_NOT_FOUND);
  EXPECT_CU(cuModuleGetFunction(&helper, module, "scale"), CUDA_ERROR_NOT_FOUND);
  if (argc == 3) {  // nvcc -fatbin: the same kernels inside a fatbinary
    std::ifstream fin(argv[2], std::ios::binary);
    std::vector<char> fatbin((std::istreambuf_iterator<char>(fin)), std::istreambuf_iterator<char>());
    CUmodule fat_module = nullptr;
    CUfunction fat_add = nullptr;
    EXPECT_CU(cuModuleLoadData(&fat_module, fatbin.data()), CUDA_SUCCESS);
    EXPECT_CU(cuModuleGetFunction(&fat_add, fat_module, "triton_add"), CUDA_SUCCESS);
    EXPECT_CU(cuModuleUnload(fat_module), CUDA_SUCCESS);
    EXPECT_CU(cuModuleGetFunction(&fat_add, fat_module, "triton_add"), CUDA_ERROR_INVALID_HANDLE);
  }
  const char garbage[64] = "not a module image";
  CUmodule bad = nullptr;
  EXPECT_CU(cuModuleLoadData(&bad, garbage), CUDA_ERROR_INVALID_IMAGE);

  const int n = 1 << 16;
  std::vector<float> host(n, 1.0f);
  CUdeviceptr x = 0, y = 0, out = 0;
  EXPECT_CU(cuMemAlloc(&x, n * sizeof(float)), CUDA_SUCCESS);
  EXPECT_CU(cuMemAlloc(&y, n * sizeof(float)), CUDA_SUCCESS);
  EXPECT_CU(cuMemAlloc(&out, n * sizeof(float)), CUDA_SUCCESS);
  CUstream stream = nullptr;
  EXPECT_CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  EXPECT_CU(cuMemcpyHtoDAsync(x, host.data(), n * sizeof(float), stream), CUDA_SUCCESS);
  EXPECT_CU(cuMemsetD32Async(y, 0, n, stream), CUDA_SUCCESS);

  CUevent begin = nullptr, end = nullptr;
  EXPECT_CU(cuEventCreate(&begin, CU_EVENT_DEFAULT), CUDA_SUCCESS);
  EXPECT_CU(cuEventCreate(&end, CU_EVENT_DEFAULT), CUDA_SUCCESS);
  EXPECT_CU(cuEventRecord(begin, stream), CUDA_SUCCESS);
  // cuLaunchKernel through the pointer cuGetProcAddress returned (cuBLAS-style).
  int nn = n;
  void* add_args[] = {&x, &y, &out, &nn};
  EXPECT_CU(reinterpret_cast<LaunchKernelFn>(launch)(add, n / 256, 1, 1, 256, 1, 1, 0, stream,
                                                     add_args, nullptr),
            CUDA_SUCCESS);
  // cuLaunchKernelEx, Triton's launcher's call.
  float a = 2.0f;
  void* scale_args[] = {&out, &a, &nn};
  CUlaunchConfig config = {};
  config.gridDimX = n / 128;
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = 128;
  config.blockDimY = config.blockDimZ = 1;
  config.hStream = stream;
  config.sharedMemBytes = 1024;  // dynamic shared memory: the truth log's dynamic_shared_bytes
  EXPECT_CU(cuLaunchKernelEx(&config, scale, scale_args, nullptr), CUDA_SUCCESS);
  // More dynamic shared memory than 48 KiB less the kernel's own, without opting in.
  int max_dynamic = 0;
  EXPECT_CU(cuFuncGetAttribute(&max_dynamic, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, add),
            CUDA_SUCCESS);
  EXPECT_TRUE(max_dynamic == 48 << 10);  // triton_add has no static shared memory
  EXPECT_CU(cuLaunchKernel(add, 1, 1, 1, 32, 1, 1, (48 << 10) + 1, stream, add_args, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  // A bad configuration is CUDA_ERROR_INVALID_VALUE, an unknown function INVALID_HANDLE.
  EXPECT_CU(cuLaunchKernel(add, 1, 1, 1, 2048, 1, 1, 0, stream, add_args, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuLaunchKernel(reinterpret_cast<CUfunction>(&count), 1, 1, 1, 1, 1, 1, 0, stream,
                           add_args, nullptr),
            CUDA_ERROR_INVALID_HANDLE);
  EXPECT_CU(cuEventRecord(end, stream), CUDA_SUCCESS);
  std::vector<float> back(n, 0.0f);
  EXPECT_CU(cuMemcpyDtoHAsync(back.data(), x, n * sizeof(float), stream), CUDA_SUCCESS);
  EXPECT_CU(cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_TRUE(back[0] == 1.0f && back[n - 1] == 1.0f);  // the bytes made the round trip
  float ms = 0.0f;
  EXPECT_CU(cuEventElapsedTime(&ms, begin, end), CUDA_SUCCESS);
  std::printf("kernels between the events: %.3f ms\n", ms);

  // A library asking the runtime for a driver entry point (cudart asks the driver in turn).
  void* via_runtime = nullptr;
  cudaDriverEntryPointQueryResult rt_status = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion("cuLaunchKernel", &via_runtime, 12000, cudaEnableDefault,
                                       &rt_status) != cudaSuccess ||
      rt_status != cudaDriverEntryPointSuccess || SymbolOf(via_runtime) != "cuLaunchKernel") {
    std::fprintf(stderr, "cudaGetDriverEntryPointByVersion(cuLaunchKernel) failed\n");
    ++g_failures;
  }

  // One runtime launch on the same context: cudaLaunchKernel, whose nested driver call is
  // cuLaunchKernel with the runtime call's correlation id.
  const void* rt_kernel = simgpuKernel("runtime_kernel", 1000000);
  if (cudaLaunchKernel(rt_kernel, dim3(1), dim3(32), nullptr, 0, nullptr) != cudaSuccess) {
    std::fprintf(stderr, "cudaLaunchKernel failed\n");
    ++g_failures;
  }
  EXPECT_CU(cuCtxSynchronize(), CUDA_SUCCESS);

  EXPECT_CU(cuEventDestroy(begin), CUDA_SUCCESS);
  EXPECT_CU(cuEventDestroy(end), CUDA_SUCCESS);
  EXPECT_CU(cuStreamDestroy(stream), CUDA_SUCCESS);
  EXPECT_CU(cuMemFree(x), CUDA_SUCCESS);
  EXPECT_CU(cuMemFree(y), CUDA_SUCCESS);
  EXPECT_CU(cuMemFree(out), CUDA_SUCCESS);
  EXPECT_CU(cuModuleUnload(module), CUDA_SUCCESS);
  std::printf("%d failure(s)\n", g_failures);
  return g_failures == 0 ? 0 : 1;
}
