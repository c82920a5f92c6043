// data_starved — the demo's workload: the host prepares every batch in load_batch(), CPU work that
// takes longer (default 20 ms) than the step's GPU work (default 5 ms), so the GPU idles waiting
// for input.
//
// Each step: load_batch() is the common "prepare and upload" loader: it fills a pinned staging
// buffer (real compute, no sleep) and enqueues the async H2D copy of it to the device; then the
// step's 11 kernels are launched on the same stream. No synchronisation per step: the GPU runs the
// step while the host is already in the next load_batch(), and then waits.
//
// Expected verdict: GPU utilisation ~ (layers+1) / load-ms = 5/20 ~ 25%; the idle time is host
// work in load_batch() (the GPU waits for the next copy, submitted late from inside load_batch()).
#include <cuda_runtime.h>

#include "mlp.cuh"
#include "workload.h"

GSW_SIMULATED_KERNEL_DURATIONS(GSW_MLP_SIMULATED_DURATIONS)

// PLANTED: the data pipeline runs on the training thread and is slower than the GPU step. It
// prepares the batch in pinned memory and enqueues its upload, so the copy call (the one that ends
// each idle gap) is made from this function's frame.
GSW_PLANTED float load_batch(float* pinned_batch, size_t floats, double load_ms,
                             float* device_batch, cudaStream_t stream) {
  const float checksum = gsw::CpuWork(pinned_batch, floats, load_ms);
  GSW_CHECK(cudaMemcpyAsync(device_batch, pinned_batch, floats * sizeof(float),
                            cudaMemcpyHostToDevice, stream));
  return checksum;
}

int main(int argc, char** argv) {
  long steps = 40, layers = 4, batch_kib = 4096;
  double load_ms = 20.0;
  gsw::Flags flags("workload_data_starved",
                   "A training loop starved by host-side batch preparation (load_batch).");
  flags.Add("steps", &steps, "training steps");
  flags.Add("load-ms", &load_ms, "host CPU time to prepare one batch in load_batch()");
  flags.Add("layers", &layers, "model layers; one step is (layers+1) ms of device time");
  flags.Add("batch-kib", &batch_kib, "batch size in KiB (copied H2D from pinned memory)");
  flags.Parse(argc, argv);

  const int width = static_cast<int>(batch_kib * 1024 / sizeof(float));
  gsw::Mlp model(static_cast<int>(layers), width);
  cudaStream_t stream;
  GSW_CHECK(cudaStreamCreate(&stream));
  // Two pinned staging buffers, each reusable once the copy that read it has finished.
  float* pinned[2];
  cudaEvent_t copied[2];
  for (int i = 0; i < 2; ++i) {
    GSW_CHECK(cudaMallocHost(&pinned[i], model.input_bytes()));
    std::memset(pinned[i], 0, model.input_bytes());
    GSW_CHECK(cudaEventCreateWithFlags(&copied[i], cudaEventDisableTiming));
  }

  const uint64_t start = gsw::NowNs();
  uint64_t load_ns = 0;
  float checksum = 0.0f;
  for (long step = 0; step < steps; ++step) {
    const int slot = static_cast<int>(step % 2);
    if (step >= 2) GSW_CHECK(cudaEventSynchronize(copied[slot]));
    const uint64_t t0 = gsw::NowNs();
    checksum +=
        load_batch(pinned[slot], static_cast<size_t>(width), load_ms, model.input(), stream);
    load_ns += gsw::NowNs() - t0;
    GSW_CHECK(cudaEventRecord(copied[slot], stream));
    model.EnqueueStep(stream);
  }
  GSW_CHECK(cudaStreamSynchronize(stream));
  const uint64_t end = gsw::NowNs();

  for (int i = 0; i < 2; ++i) {
    GSW_CHECK(cudaEventDestroy(copied[i]));
    GSW_CHECK(cudaFreeHost(pinned[i]));
  }
  GSW_CHECK(cudaStreamDestroy(stream));
  gsw::Summary("data_starved")
      .Add("steps", steps)
      .Add("wall_ms", gsw::MsBetween(start, end))
      .Add("load_batch_ms", static_cast<double>(load_ns) / 1e6)
      .Add("gpu_ms_per_step", gsw::MlpStepMs(static_cast<int>(layers)))
      .Add("kernels", steps * gsw::MlpKernelsPerStep(static_cast<int>(layers)))
      .Add("checksum", static_cast<double>(checksum))
      .Print();
  return 0;
}
