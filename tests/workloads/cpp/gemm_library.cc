#include "gemm_library.h"

#include <cuda.h>
#include <dlfcn.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace {

// The driver functions the library uses, each fetched by cuGetProcAddress (CUDA 13's driver API
// reference: cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, symbolStatus); the base name,
// the version the caller was built for).
decltype(&cuModuleLoadData) g_module_load_data = nullptr;
decltype(&cuModuleGetFunction) g_module_get_function = nullptr;
decltype(&cuLaunchKernel) g_launch_kernel = nullptr;
CUfunction g_kernels[3] = {};
constexpr const char* kKernelNames[3] = {"triton_poi_fused_add_relu_0", "triton_red_fused_sum_1",
                                         "triton_per_fused_mul_2"};

// Says what failed on stderr; the non-zero status the entry points return.
int Fail(const char* what, int code) {
  std::fprintf(stderr, "gemm_library: %s failed (%d)\n", what, code);
  return 1;
}

template <typename F>
bool Fetch(decltype(&cuGetProcAddress_v2) get, const char* symbol, F* out) {
  void* pfn = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  const CUresult r = get(symbol, &pfn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  if (r != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || pfn == nullptr) {
    Fail(symbol, r);
    return false;
  }
  *out = reinterpret_cast<F>(pfn);
  return true;
}

}  // namespace

extern "C" int gemm_library_init(const char* cubin_path) {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) return Fail("dlopen libcuda.so.1", 0);
  auto get = reinterpret_cast<decltype(&cuGetProcAddress_v2)>(dlsym(driver, "cuGetProcAddress_v2"));
  if (get == nullptr) return Fail("dlsym cuGetProcAddress_v2", 0);
  if (!Fetch(get, "cuModuleLoadData", &g_module_load_data) || !Fetch(get, "cuModuleGetFunction", &g_module_get_function) ||
      !Fetch(get, "cuLaunchKernel", &g_launch_kernel))
    return 1;
  std::ifstream in(cubin_path, std::ios::binary);
  const std::string image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (image.empty()) return Fail(cubin_path, 0);
  CUmodule module = nullptr;
  if (CUresult r = g_module_load_data(&module, image.data()); r != CUDA_SUCCESS) return Fail("cuModuleLoadData", r);
  for (int i = 0; i < 3; ++i) {
    if (CUresult r = g_module_get_function(&g_kernels[i], module, kKernelNames[i]); r != CUDA_SUCCESS)
      return Fail(kKernelNames[i], r);
  }
  return 0;
}

extern "C" int gemm_library_forward(void* stream, uint64_t x, uint64_t y, uint64_t out, int n) {
  const unsigned blocks = static_cast<unsigned>(n > 1024 ? n / 1024 : 1);
  float scale = 0.5f;
  void* add_relu[] = {&x, &y, &out, &n};
  void* sum[] = {&out, &y, &n};
  void* mul[] = {&out, &scale, &n};
  void** params[3] = {add_relu, sum, mul};
  for (int i = 0; i < 3; ++i) {
    const CUresult r = g_launch_kernel(g_kernels[i], blocks, 1, 1, 1024, 1, 1, 0, static_cast<CUstream>(stream),
                                       params[i], nullptr);
    if (r != CUDA_SUCCESS) return Fail("cuLaunchKernel", r);
  }
  return 0;
}
