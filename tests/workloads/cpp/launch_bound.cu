// launch_bound — a step is hundreds of tiny unfused elementwise kernels (1.5–2.5 us each on the
// device) launched back to back from launch_tiny_kernels(). Each launch costs the host more (simgpu
// models ~5 us per launch) than the kernel runs, so the GPU drains its queue and waits for the
// next launch: the host launch path is the bottleneck.
//
// Each step: --kernels launches cycling bias_add, relu_inplace, scale_inplace, residual_add on
// one stream (with --depths D, launch i from i % D calls deeper). No synchronisation until the end.
//
// Expected verdict: GPU utilisation ~ 2 us / (launch cost ~5-6 us) ~ 35%; the idle time is
// launch overhead (gaps between kernels, host inside cudaLaunchKernel) in launch_tiny_kernels().
#include <cuda_runtime.h>

#include "model_kernels.cuh"
#include "workload.h"

GSW_SIMULATED_KERNEL_DURATIONS(
    "bias_add=2us,relu_inplace=1500ns,scale_inplace=2500ns,residual_add=2us")

// Tiny op number `op` (of the four, in turn). Inlined: its launches are its caller's call sites.
__attribute__((always_inline)) inline void launch_op(long op, float* x, const float* y, int n, dim3 grid,
                                                     cudaStream_t stream) {
  switch (op % 4) {
    case 0: bias_add<<<grid, gsw::kBlock, 0, stream>>>(x, 0.1f, n); break;
    case 1: relu_inplace<<<grid, gsw::kBlock, 0, stream>>>(x, n); break;
    case 2: scale_inplace<<<grid, gsw::kBlock, 0, stream>>>(x, 0.99f, n); break;
    default: residual_add<<<grid, gsw::kBlock, 0, stream>>>(x, y, n); break;
  }
}

// The same, `extra` calls deeper: a framework reaches its launches through call chains of many
// depths (operators, modules), which the agent's stack reuse has to tell apart.
__attribute__((noinline)) void launch_op_at_depth(long op, int extra, float* x, const float* y, int n,
                                                  dim3 grid, cudaStream_t stream) {
  if (extra > 0) {
    launch_op_at_depth(op, extra - 1, x, y, n, grid, stream);
    asm volatile("" ::: "memory");  // not a tail call: each level keeps its frame
    return;
  }
  launch_op(op, x, y, n, grid, stream);
}

// PLANTED: one launch per tiny op; the launches cannot outrun the device. `depths` > 1: launch i
// comes from i % depths calls deeper.
GSW_PLANTED void launch_tiny_kernels(float* x, const float* y, int n, long count,
                                     cudaStream_t stream, long depths = 1) {
  const dim3 grid = gsw::GridFor(n);
  for (long i = 0; i < count; ++i) {
    if (depths > 1) {
      launch_op_at_depth(i, static_cast<int>(i % depths), x, y, n, grid, stream);
    } else {
      launch_op(i, x, y, n, grid, stream);
    }
  }
  GSW_CHECK(cudaGetLastError());
}

int main(int argc, char** argv) {
  long steps = 100, kernels = 200, width = 4096, graph = 0, depths = 1;
  gsw::Flags flags("workload_launch_bound",
                   "A training loop of many tiny kernels, bound by the host launch cost "
                   "(launch_tiny_kernels).");
  flags.Add("steps", &steps, "training steps");
  flags.Add("kernels", &kernels, "tiny kernel launches per step");
  flags.Add("width", &width, "elements per tiny kernel");
  flags.Add("depths", &depths,
            "launch i from i % depths calls deeper (a framework's many call chains; 1: all from one)");
  flags.Add("graph", &graph,
            "1: capture one step's launches in a CUDA graph and launch the graph each step (the "
            "fix, for what-if checks)");
  flags.Parse(argc, argv);

  const int n = static_cast<int>(width);
  float *x, *y;
  GSW_CHECK(cudaMalloc(&x, n * sizeof(float)));
  GSW_CHECK(cudaMalloc(&y, n * sizeof(float)));
  GSW_CHECK(cudaMemset(x, 0, n * sizeof(float)));
  GSW_CHECK(cudaMemset(y, 0, n * sizeof(float)));
  cudaStream_t stream;
  GSW_CHECK(cudaStreamCreate(&stream));
  GSW_CHECK(cudaDeviceSynchronize());

  cudaGraphExec_t step_graph = nullptr;
  if (graph) {
    cudaGraph_t captured;
    GSW_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    launch_tiny_kernels(x, y, n, kernels, stream);
    GSW_CHECK(cudaStreamEndCapture(stream, &captured));
    GSW_CHECK(cudaGraphInstantiate(&step_graph, captured, 0));
    GSW_CHECK(cudaGraphDestroy(captured));
  }
  const uint64_t start = gsw::NowNs();
  for (long step = 0; step < steps; ++step) {
    if (graph) {
      GSW_CHECK(cudaGraphLaunch(step_graph, stream));
    } else {
      launch_tiny_kernels(x, y, n, kernels, stream, depths);
    }
  }
  const uint64_t launched = gsw::NowNs();
  GSW_CHECK(cudaStreamSynchronize(stream));
  const uint64_t end = gsw::NowNs();

  if (graph) GSW_CHECK(cudaGraphExecDestroy(step_graph));
  GSW_CHECK(cudaStreamDestroy(stream));
  GSW_CHECK(cudaFree(x));
  GSW_CHECK(cudaFree(y));
  gsw::Summary("launch_bound")
      .Add("steps", steps)
      .Add("wall_ms", gsw::MsBetween(start, end))
      .Add("kernels", steps * kernels)
      .Add("host_us_per_launch", static_cast<double>(launched - start) / 1e3 /
                                     static_cast<double>(steps * kernels > 0 ? steps * kernels : 1))
      .Add("gpu_us_per_kernel", 2.0)
      .Print();
  return 0;
}
