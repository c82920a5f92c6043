// model_kernels.cuh — the real __global__ kernels of the workloads' toy model (an MLP over a flat
// float batch). They compute something sensible on a real GPU; on simgpu only their names matter:
// each workload sets their device durations with GSW_SIMULATED_KERNEL_DURATIONS.
//
// Plain C++ linkage on purpose: CUPTI (real and simulated) reports mangled names such as
// _Z13forward_layerPKfS0_Pfi, and a profiler has to cope with that; SIMGPU_KERNEL_DURATIONS
// matches the demangled name without its parameter list ("forward_layer").
#ifndef GPUSTALL_TESTS_WORKLOADS_CPP_MODEL_KERNELS_CUH_
#define GPUSTALL_TESTS_WORKLOADS_CPP_MODEL_KERNELS_CUH_

#include <cuda_runtime.h>

// Scales raw samples into roughly zero-mean inputs.
__global__ void normalize_batch(float* x, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    x[i] = (x[i] - 0.5f) * 2.0f;
  }
}

// out = relu(in * w): one elementwise "layer" (weights are per element to stay tiny).
__global__ void forward_layer(const float* in, const float* w, float* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    float v = in[i] * w[i];
    out[i] = v > 0.0f ? v : 0.0f;
  }
}

// grad_w += grad_out * in where the layer was active.
__global__ void backward_layer(const float* in, const float* out, const float* grad_out,
                               float* grad_w, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    grad_w[i] += out[i] > 0.0f ? grad_out[i] * in[i] : 0.0f;
  }
}

// w -= lr * g; g = 0.
__global__ void sgd_update(float* w, float* g, float lr, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    w[i] -= lr * g[i];
    g[i] = 0.0f;
  }
}

// loss = mean(out^2), one block's worth of atomics (a toy reduction).
__global__ void loss_reduce(const float* out, float* loss, int n) {
  float acc = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    acc += out[i] * out[i];
  }
  atomicAdd(loss, acc / static_cast<float>(n));
}

// The small elementwise kernels an unfused model launches by the hundred.
__global__ void bias_add(float* x, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += b;
}
__global__ void relu_inplace(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] < 0.0f) x[i] = 0.0f;
}
__global__ void scale_inplace(float* x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}
__global__ void residual_add(float* x, const float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += y[i];
}

namespace gsw {
// A grid that covers n elements with 256-thread blocks (capped: the kernels loop).
inline dim3 GridFor(int n) {
  int blocks = (n + 255) / 256;
  return dim3(blocks < 1024 ? (blocks < 1 ? 1 : blocks) : 1024);
}
constexpr int kBlock = 256;
}  // namespace gsw

#endif  // GPUSTALL_TESTS_WORKLOADS_CPP_MODEL_KERNELS_CUH_
