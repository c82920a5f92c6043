// under_filled — a step whose GPU is never idle, yet mostly empty: GPU-Util counts a device busy
// while one kernel runs, however few of its SMs that kernel gives work. Four planted launch
// shapes, one launch function each, launched back to back on one stream (the host queues a whole
// step ahead of the device, so the device never waits for it):
//   launch_one_block       a long reduction in ONE block of 256 threads: 1 SM of all of them
//   launch_partial_wave    SMs × blocks-per-SM + 1 blocks of 1024 threads: a full wave, then a
//                          second wave of one block (wave quantisation)
//   launch_full_grid       SMs × blocks-per-SM blocks of 1024 threads: one full wave (the control)
//   launch_register_bound  SMs × 2 blocks of 1024 threads of a kernel that needs more than 32
//                          registers per thread: an SM's registers hold one block, not the two
//                          its warps could, so two waves where one would do
// Blocks per SM for 1024-thread blocks: the SM's threads / 1024 (2 on an H100), which holds when
// registers do not limit (the light kernels need far fewer than 32 per thread).
//
// Expected verdict: GPU-Util ~100%, SM coverage far lower; the one-block kernel costs the most
// under-filled time (its duration × (1 − 1/SMs)), so its launch site (launch_one_block) ranks
// first among the under-filled kernels.
#include <cuda_runtime.h>

#include "workload.h"

GSW_SIMULATED_KERNEL_DURATIONS(
    "one_block_reduce=3ms,partial_wave_scale=1ms,full_grid_scale=1ms,register_bound_mix=1ms")

// One block sums the whole array: a reduction nobody split across blocks.
__global__ void one_block_reduce(const float* x, int n, float* out) {
  __shared__ float partial[256];
  float s = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += x[i];
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) partial[threadIdx.x] += partial[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = partial[0];
}

__global__ void partial_wave_scale(float* x, int n, float a) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

__global__ void full_grid_scale(float* x, int n, float a) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

// 48 values live at once: the compiler gives it every register __launch_bounds__(1024) allows
// (64 per thread), so 1024 threads take the SM's 65536 registers.
__global__ void __launch_bounds__(1024) register_bound_mix(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc[48];
#pragma unroll
  for (int j = 0; j < 48; ++j) acc[j] = x[(i + j * 977) % n];
#pragma unroll
  for (int k = 0; k < 8; ++k) {
#pragma unroll
    for (int j = 0; j < 48; ++j) acc[j] = acc[j] * acc[(j + k + 1) % 48] + x[k];
  }
  float s = 0;
#pragma unroll
  for (int j = 0; j < 48; ++j) s += acc[j] * (j + 1);
  x[i] = s;
}

constexpr int kWideBlock = 1024;

// PLANTED: the whole reduction in one block.
GSW_PLANTED void launch_one_block(const float* x, int n, float* out, cudaStream_t s) {
  one_block_reduce<<<1, 256, 0, s>>>(x, n, out);
  GSW_CHECK(cudaGetLastError());  // also: no tail call, so this frame stays on the stack
}

// PLANTED: one block more than a wave.
GSW_PLANTED void launch_partial_wave(float* x, int n, int wave, cudaStream_t s) {
  partial_wave_scale<<<wave + 1, kWideBlock, 0, s>>>(x, n, 0.5f);
  GSW_CHECK(cudaGetLastError());  // also: no tail call, so this frame stays on the stack
}

GSW_PLANTED void launch_full_grid(float* x, int n, int wave, cudaStream_t s) {
  full_grid_scale<<<wave, kWideBlock, 0, s>>>(x, n, 2.0f);
  GSW_CHECK(cudaGetLastError());  // also: no tail call, so this frame stays on the stack
}

// PLANTED: a wave's worth of blocks that the registers let in only half at a time.
GSW_PLANTED void launch_register_bound(float* x, int n, int wave, cudaStream_t s) {
  register_bound_mix<<<wave, kWideBlock, 0, s>>>(x, n);
  GSW_CHECK(cudaGetLastError());  // also: no tail call, so this frame stays on the stack
}

GSW_PLANTED void train_step(float* x, int n, float* out, int wave, cudaStream_t s) {
  launch_one_block(x, n, out, s);
  launch_partial_wave(x, n, wave, s);
  launch_full_grid(x, n, wave, s);
  launch_register_bound(x, n, wave, s);
}

int main(int argc, char** argv) {
  long steps = 40;
  gsw::Flags flags("workload_under_filled",
                   "A busy GPU whose kernels leave most SMs without work (one-block, partial-wave "
                   "and register-bound launches).");
  flags.Add("steps", &steps, "training steps");
  flags.Parse(argc, argv);

  int device = 0, sms = 0, threads_per_sm = 0;
  GSW_CHECK(cudaGetDevice(&device));
  GSW_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  GSW_CHECK(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  const int wave = sms * (threads_per_sm / kWideBlock);  // blocks of one full wave
  const int n = (wave + 1) * kWideBlock;
  float *x, *out;
  GSW_CHECK(cudaMalloc(&x, n * sizeof(float)));
  GSW_CHECK(cudaMalloc(&out, sizeof(float)));
  GSW_CHECK(cudaMemset(x, 0, n * sizeof(float)));
  cudaStream_t stream;
  GSW_CHECK(cudaStreamCreate(&stream));
  GSW_CHECK(cudaDeviceSynchronize());

  const uint64_t start = gsw::NowNs();
  for (long step = 0; step < steps; ++step) train_step(x, n, out, wave, stream);
  GSW_CHECK(cudaStreamSynchronize(stream));
  const uint64_t end = gsw::NowNs();

  GSW_CHECK(cudaStreamDestroy(stream));
  GSW_CHECK(cudaFree(x));
  GSW_CHECK(cudaFree(out));
  gsw::Summary("under_filled")
      .Add("steps", steps)
      .Add("wall_ms", gsw::MsBetween(start, end))
      .Add("sms", static_cast<long>(sms))
      .Add("wave_blocks", static_cast<long>(wave))
      .Print();
  return 0;
}
