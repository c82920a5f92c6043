// allocator_churn — activations and their gradients are cudaMalloc'ed at the start of every step
// in allocate_activations() and cudaFree'd at its end in free_activations(). cudaFree synchronises
// the device implicitly, so every step drains the GPU, and the host then spends the gap inside the
// allocator (simgpu: ~20 us per cudaMalloc, ~10 us per cudaFree) before it launches again.
//
// Each step (layers=32): 64 cudaMalloc, 32 forward_layer (15 us) + 32 backward_layer (20 us)
// kernels = 1.12 ms of device time, 64 cudaFree.
//
// Expected verdict: GPU utilisation ~ 1.12 / (1.12 + 64*0.02 + 64*0.01) ~ 37%; the idle time is
// host time in the allocator: cudaMalloc in allocate_activations() and cudaFree in
// free_activations().
#include <cuda_runtime.h>

#include <vector>

#include "model_kernels.cuh"
#include "workload.h"

GSW_SIMULATED_KERNEL_DURATIONS("forward_layer=15us,backward_layer=20us")

struct Activations {
  std::vector<float*> act;   // act[l]: output of layer l
  std::vector<float*> grad;  // grad[l]: gradient w.r.t. act[l]
};

// PLANTED: fresh device buffers every step instead of reusing them (or a caching allocator).
GSW_PLANTED void allocate_activations(Activations* a, int layers, size_t bytes) {
  a->act.assign(layers, nullptr);
  a->grad.assign(layers, nullptr);
  for (int l = 0; l < layers; ++l) {
    GSW_CHECK(cudaMalloc(&a->act[l], bytes));
    GSW_CHECK(cudaMalloc(&a->grad[l], bytes));
  }
}

// PLANTED: cudaFree waits for the device to drain, every step.
GSW_PLANTED void free_activations(Activations* a) {
  for (size_t l = 0; l < a->act.size(); ++l) {
    GSW_CHECK(cudaFree(a->act[l]));
    GSW_CHECK(cudaFree(a->grad[l]));
  }
  a->act.clear();
  a->grad.clear();
}

int main(int argc, char** argv) {
  long steps = 60, layers = 32, act_kib = 256, preallocate = 0;
  gsw::Flags flags("workload_allocator_churn",
                   "A training loop that allocates and frees its activations every step "
                   "(allocate_activations / free_activations).");
  flags.Add("steps", &steps, "training steps");
  flags.Add("layers", &layers, "layers; each allocates an activation and a gradient buffer");
  flags.Add("act-kib", &act_kib, "size of each activation buffer in KiB");
  flags.Add("preallocate", &preallocate,
            "1: allocate the buffers once before the loop and reuse them (the fix, for what-if checks)");
  flags.Parse(argc, argv);

  const int n = static_cast<int>(act_kib * 1024 / sizeof(float));
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  float *input, *weights;
  GSW_CHECK(cudaMalloc(&input, bytes));
  GSW_CHECK(cudaMalloc(&weights, bytes * layers));
  GSW_CHECK(cudaMemset(input, 0, bytes));
  GSW_CHECK(cudaMemset(weights, 0, bytes * layers));
  GSW_CHECK(cudaDeviceSynchronize());
  const dim3 grid = gsw::GridFor(n);

  const uint64_t start = gsw::NowNs();
  uint64_t alloc_ns = 0, free_ns = 0;
  Activations a;
  if (preallocate) allocate_activations(&a, static_cast<int>(layers), bytes);
  for (long step = 0; step < steps; ++step) {
    const uint64_t t0 = gsw::NowNs();
    if (!preallocate) allocate_activations(&a, static_cast<int>(layers), bytes);
    alloc_ns += gsw::NowNs() - t0;
    for (int l = 0; l < layers; ++l) {
      const float* in = l == 0 ? input : a.act[l - 1];
      forward_layer<<<grid, gsw::kBlock>>>(in, weights + static_cast<size_t>(l) * n, a.act[l], n);
    }
    for (int l = static_cast<int>(layers) - 1; l >= 0; --l) {
      const float* in = l == 0 ? input : a.act[l - 1];
      backward_layer<<<grid, gsw::kBlock>>>(in, a.act[l], a.act[layers - 1], a.grad[l], n);
    }
    GSW_CHECK(cudaGetLastError());
    const uint64_t t1 = gsw::NowNs();
    if (!preallocate) free_activations(&a);
    free_ns += gsw::NowNs() - t1;
  }
  GSW_CHECK(cudaDeviceSynchronize());
  if (preallocate) free_activations(&a);
  const uint64_t end = gsw::NowNs();

  GSW_CHECK(cudaFree(input));
  GSW_CHECK(cudaFree(weights));
  gsw::Summary("allocator_churn")
      .Add("steps", steps)
      .Add("wall_ms", gsw::MsBetween(start, end))
      .Add("allocate_ms", static_cast<double>(alloc_ns) / 1e6)
      .Add("free_ms", static_cast<double>(free_ns) / 1e6)
      .Add("mallocs", steps * layers * 2)
      .Add("kernels", steps * layers * 2)
      .Add("gpu_ms_per_step", static_cast<double>(layers) * 0.035)
      .Print();
  return 0;
}
