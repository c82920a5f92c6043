// pageable_copies — the batch lives in pageable host memory (one std::vector per sample, as a
// naive collate leaves it) and copy_batch() moves it sample by sample with cudaMemcpyAsync. From
// pageable memory those "async" copies are synchronous: each one blocks the host until it has
// been staged and transferred (at pageable bandwidth, 8 GB/s on simgpu instead of 24), so the host
// cannot queue anything ahead and the device sits idle between the per-sample round trips.
//
// Each step: copy_batch() (default 128 samples x 32 KiB, each copy ~4 us of device time and
// ~10-80 us of host round trip, depending on how loaded the machine is), then the 5 kernels of a
// model 4x smaller than data_starved's (layers=1: 0.5 ms of device time) on the same stream; the
// first copy of the next step waits behind those kernels.
//
// Expected numbers per step: device busy ~0.5 ms (kernels) + 128 x 4 us (copies) = ~1 ms; host
// round trips 128 x (2.5 us of simgpu API cost and copy latency + a wake-up) = 1-25 ms.
//
// Note on the simgpu model: a pageable copy occupies the device for its whole (slow) transfer, so
// one big pageable copy shows up as busy device time, not idle time; the idle the profiler must
// explain comes from the host being held inside the copy calls, which per-sample copies make
// dominant. Pinned memory (cudaMallocHost) would let all copies queue without blocking.
//
// Expected verdict: GPU utilisation ~5-40% (the per-copy host round trip, mostly a thread
// wake-up, grows with machine load); the idle time is the host blocked in pageable
// cudaMemcpyAsync calls in copy_batch().
#include <cuda_runtime.h>

#include <vector>

#include "mlp.cuh"
#include "workload.h"

// mlp.cuh's durations / 4: a small model, so that the copies, not the kernels, decide the step.
GSW_SIMULATED_KERNEL_DURATIONS("normalize_batch=50us,forward_layer=100us,loss_reduce=25us,"
                               "backward_layer=150us,sgd_update=175us")
constexpr double kModelScale = 0.25;

// PLANTED: per-sample copies from pageable memory; each call blocks until its transfer is done.
GSW_PLANTED void copy_batch(float* device_batch, const std::vector<float*>& samples, size_t sample_floats,
                            cudaStream_t stream) {
  size_t offset = 0;
  for (const float* sample : samples) {
    GSW_CHECK(cudaMemcpyAsync(device_batch + offset, sample, sample_floats * sizeof(float),
                              cudaMemcpyHostToDevice, stream));
    offset += sample_floats;
  }
}

int main(int argc, char** argv) {
  long steps = 30, layers = 1, samples = 128, sample_kib = 32, pinned = 0;
  gsw::Flags flags("workload_pageable_copies",
                   "A training loop whose batches are copied from pageable memory, sample by "
                   "sample (copy_batch).");
  flags.Add("steps", &steps, "training steps");
  flags.Add("samples", &samples, "samples per batch (one pageable copy each)");
  flags.Add("sample-kib", &sample_kib, "size of one sample in KiB");
  flags.Add("layers", &layers, "model layers; one step is (layers+1)/4 ms of device time");
  flags.Add("pinned", &pinned, "1: the samples live in pinned memory (the fix, for what-if checks)");
  flags.Parse(argc, argv);

  const size_t sample_floats = static_cast<size_t>(sample_kib) * 1024 / sizeof(float);
  const int width = static_cast<int>(sample_floats * static_cast<size_t>(samples));
  gsw::Mlp model(static_cast<int>(layers), width);
  // The samples: pageable (std::vector, as a naive collate leaves them) or, with --pinned, each in
  // pinned memory from cudaMallocHost.
  gsw::HostSamples host(samples, sample_floats, 0.25f, pinned != 0);
  std::vector<float*>& batch = host.samples();
  cudaStream_t stream;
  GSW_CHECK(cudaStreamCreate(&stream));
  GSW_CHECK(cudaDeviceSynchronize());

  const uint64_t start = gsw::NowNs();
  uint64_t copy_ns = 0;
  for (long step = 0; step < steps; ++step) {
    batch[static_cast<size_t>(step) % batch.size()][0] = static_cast<float>(step);  // "new data"
    const uint64_t t0 = gsw::NowNs();
    copy_batch(model.input(), batch, sample_floats, stream);
    copy_ns += gsw::NowNs() - t0;
    model.EnqueueStep(stream);
  }
  GSW_CHECK(cudaStreamSynchronize(stream));
  const uint64_t end = gsw::NowNs();

  GSW_CHECK(cudaStreamDestroy(stream));
  gsw::Summary("pageable_copies")
      .Add("steps", steps)
      .Add("wall_ms", gsw::MsBetween(start, end))
      .Add("copy_batch_ms", static_cast<double>(copy_ns) / 1e6)
      .Add("copies", steps * samples)
      .Add("gpu_ms_per_step", kModelScale * gsw::MlpStepMs(static_cast<int>(layers)))
      .Add("kernels", steps * gsw::MlpKernelsPerStep(static_cast<int>(layers)))
      .Print();
  return 0;
}
