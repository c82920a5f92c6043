/* e2e_plugin.c — a plugin built against CUDA 13's headers and linked to libcudart.so.13, which the
 * CUDA 12 build of e2e_app (gs_e2e_app12, mode "plugin") dlopens RTLD_LOCAL: a cu12 application
 * and a cu13 extension in one process. Its CUDA calls reach the agent's wrappers (global scope
 * first) like the application's, and must reach its own runtime (agent/capture/caller_runtime.h).
 *
 * Runs on simgpu. e2e_plugin_steps does its own GPU work, then checks that its runtime is the
 * one that saw its calls: an allocation it cannot get fails, and its runtime's last error
 * (cudaGetLastError, which no wrapper intercepts, so it binds to this plugin's own runtime) must
 * be that failure. */
#include <cuda_runtime_api.h>
#include <stdint.h>

#include "simgpu.h"
#include "tests/testlib/cuda_check.h"

enum { kPluginBytes = 1 << 18 };

/* The planted function of the plugin's work. Returns the checksum, or -1 when its runtime did
 * not get its calls. */
__attribute__((visibility("default"), noinline)) double e2e_plugin_steps(int steps) {
  float* device = NULL;
  float* host = NULL;
  cudaStream_t stream;
  const void* kernel = simgpuKernel("e2e_plugin_kernel", 1000000); /* 1 ms */
  dim3 grid = {1, 1, 1}, block = {32, 1, 1};
  CHECK(cudaMalloc((void**)&device, kPluginBytes));
  CHECK(cudaMallocHost((void**)&host, kPluginBytes));
  CHECK(cudaStreamCreate(&stream));
  for (int i = 0; i < kPluginBytes / (int)sizeof(float); ++i) host[i] = (float)(i % 5);
  double sum = 0;
  for (int step = 0; step < steps; ++step) {
    void* args[1] = {&device};
    CHECK(cudaMemcpyAsync(device, host, kPluginBytes, cudaMemcpyHostToDevice, stream));
    CHECK(cudaLaunchKernel(kernel, grid, block, args, 0, stream));
    CHECK(cudaMemcpyAsync(host, device, kPluginBytes, cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    sum += host[kPluginBytes / sizeof(float) - 1] + step;
  }
  void* huge = NULL;
  const cudaError_t failed = cudaMalloc(&huge, (size_t)1 << 60);
  const cudaError_t last = cudaGetLastError();
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFreeHost(host));
  CHECK(cudaFree(device));
  if (failed == cudaSuccess || last != failed) return -1;
  return sum;
}
