// well_fed — the healthy reference: the same model shape and batch as data_starved but 4x bigger
// (every kernel takes 4x as long: 20 ms of device time per step in 11 kernels), input
// multi-buffered (--slots, default 6) in pinned memory, copied on a separate copy stream, ordered
// with events, and host preparation (default 0.5 ms) far shorter than the GPU step. The host runs
// up to five steps (100 ms) ahead and needs little CPU per step, so the GPU runs kernels back to
// back even when the host thread is descheduled for a while (a loaded machine: the tests run on 2
// shared cores).
//
// Each step: prepare_batch() into pinned slot s (after the copy that last read it finished),
// copy stream waits until compute no longer reads device slot s, H2D copy, event; compute stream
// waits for that event and runs the step's 11 kernels, then records "slot s consumed".
//
// Expected verdict: GPU utilisation > 95% (copies overlap kernels); no recommendation.
#include <cuda_runtime.h>

#include <vector>

#include "mlp.cuh"
#include "workload.h"

// mlp.cuh's durations x4: a step is 4 * (layers + 1) ms.
GSW_SIMULATED_KERNEL_DURATIONS("normalize_batch=800us,forward_layer=1600us,loss_reduce=400us,"
                               "backward_layer=2400us,sgd_update=2800us")
constexpr double kModelScale = 4.0;

// Not planted: host preparation that the pipeline hides behind the GPU.
GSW_PLANTED float prepare_batch(float* pinned_batch, size_t floats, double load_ms) {
  return gsw::CpuWork(pinned_batch, floats, load_ms);
}

int main(int argc, char** argv) {
  long steps = 25, layers = 4, batch_kib = 4096, slots = 6;
  double load_ms = 0.5;
  gsw::Flags flags("workload_well_fed",
                   "A healthy training loop: pinned double-buffered input, copies on their own "
                   "stream, GPU busy.");
  flags.Add("steps", &steps, "training steps");
  flags.Add("load-ms", &load_ms, "host CPU time to prepare one batch (hidden behind the GPU)");
  flags.Add("layers", &layers, "model layers; one step is 4*(layers+1) ms of device time");
  flags.Add("batch-kib", &batch_kib, "batch size in KiB");
  flags.Add("slots", &slots, "input buffers (pinned and device); the host runs up to slots-1 "
                             "steps ahead");
  flags.Parse(argc, argv);
  if (slots < 2) slots = 2;

  const int width = static_cast<int>(batch_kib * 1024 / sizeof(float));
  gsw::Mlp model(static_cast<int>(layers), width);
  const size_t bytes = model.input_bytes();
  cudaStream_t compute, copy;
  GSW_CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
  GSW_CHECK(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
  std::vector<float*> pinned(slots), device_in(slots);
  std::vector<cudaEvent_t> copied(slots), consumed(slots);
  for (int i = 0; i < slots; ++i) {
    GSW_CHECK(cudaMallocHost(&pinned[i], bytes));
    std::memset(pinned[i], 0, bytes);
    GSW_CHECK(cudaMalloc(&device_in[i], bytes));
    GSW_CHECK(cudaEventCreateWithFlags(&copied[i], cudaEventDisableTiming));
    GSW_CHECK(cudaEventCreateWithFlags(&consumed[i], cudaEventDisableTiming));
  }
  GSW_CHECK(cudaDeviceSynchronize());

  const uint64_t start = gsw::NowNs();
  float checksum = 0.0f;
  for (long step = 0; step < steps; ++step) {
    const int s = static_cast<int>(step % slots);
    const bool reused = step >= slots;
    if (reused) GSW_CHECK(cudaEventSynchronize(copied[s]));  // pinned[s] is free again
    checksum += prepare_batch(pinned[s], static_cast<size_t>(width), load_ms);
    if (reused) GSW_CHECK(cudaStreamWaitEvent(copy, consumed[s], 0));
    GSW_CHECK(cudaMemcpyAsync(device_in[s], pinned[s], bytes, cudaMemcpyHostToDevice, copy));
    GSW_CHECK(cudaEventRecord(copied[s], copy));
    GSW_CHECK(cudaStreamWaitEvent(compute, copied[s], 0));
    model.EnqueueStep(compute, device_in[s]);
    GSW_CHECK(cudaEventRecord(consumed[s], compute));
  }
  GSW_CHECK(cudaStreamSynchronize(compute));
  const uint64_t end = gsw::NowNs();

  for (int i = 0; i < slots; ++i) {
    GSW_CHECK(cudaEventDestroy(copied[i]));
    GSW_CHECK(cudaEventDestroy(consumed[i]));
    GSW_CHECK(cudaFreeHost(pinned[i]));
    GSW_CHECK(cudaFree(device_in[i]));
  }
  GSW_CHECK(cudaStreamDestroy(compute));
  GSW_CHECK(cudaStreamDestroy(copy));
  gsw::Summary("well_fed")
      .Add("steps", steps)
      .Add("wall_ms", gsw::MsBetween(start, end))
      .Add("gpu_ms_per_step", kModelScale * gsw::MlpStepMs(static_cast<int>(layers)))
      .Add("kernels", steps * gsw::MlpKernelsPerStep(static_cast<int>(layers)))
      .Add("checksum", static_cast<double>(checksum))
      .Print();
  return 0;
}
