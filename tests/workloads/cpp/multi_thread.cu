// multi_thread — 8 host threads, each training its own small model on its own non-blocking
// stream: prepare a batch (CPU work), copy it H2D from pinned memory, run the step's kernels, read
// the loss back (cudaMemcpyAsync + cudaStreamSynchronize). For the agent's tests: concurrent API
// calls from many threads, per-thread stacks, several streams busy at once.
//
// Each step per thread (layers=1): 0.5 ms of host work in worker_step(), a 1 MiB H2D copy, 5
// kernels (2 ms of device time), a 4-byte D2H copy and a stream synchronisation. Streams run
// concurrently on simgpu, so the device is busy most of the time (no single planted cause).
#include <cuda_runtime.h>

#include <thread>
#include <vector>

#include "mlp.cuh"
#include "workload.h"

GSW_SIMULATED_KERNEL_DURATIONS(GSW_MLP_SIMULATED_DURATIONS)

struct WorkerResult {
  float loss = 0.0f;
  float checksum = 0.0f;
};

// One step of one worker thread: host preparation, copy, kernels, loss read-back.
GSW_PLANTED float worker_step(const gsw::Mlp& model, float* pinned, float* pinned_loss,
                              int width, double prepare_ms, cudaStream_t stream) {
  float checksum = gsw::CpuWork(pinned, static_cast<size_t>(width), prepare_ms);
  GSW_CHECK(cudaMemcpyAsync(model.input(), pinned, model.input_bytes(), cudaMemcpyHostToDevice,
                            stream));
  model.EnqueueStep(stream);
  GSW_CHECK(cudaMemcpyAsync(pinned_loss, model.loss(), sizeof(float), cudaMemcpyDeviceToHost,
                            stream));
  GSW_CHECK(cudaStreamSynchronize(stream));
  return checksum;
}

GSW_PLANTED void worker_loop(int id, long steps, int layers, int width, double prepare_ms,
                             WorkerResult* out) {
  GSW_CHECK(cudaSetDevice(0));
  gsw::Mlp model(layers, width);
  cudaStream_t stream;
  GSW_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  float *pinned, *pinned_loss;
  GSW_CHECK(cudaMallocHost(&pinned, model.input_bytes()));
  GSW_CHECK(cudaMallocHost(&pinned_loss, sizeof(float)));
  for (int i = 0; i < width; ++i) pinned[i] = static_cast<float>(id);
  for (long step = 0; step < steps; ++step) {
    out->checksum += worker_step(model, pinned, pinned_loss, width, prepare_ms, stream);
  }
  out->loss = *pinned_loss;
  GSW_CHECK(cudaFreeHost(pinned));
  GSW_CHECK(cudaFreeHost(pinned_loss));
  GSW_CHECK(cudaStreamDestroy(stream));
}

int main(int argc, char** argv) {
  long steps = 25, threads = 8, layers = 1, batch_kib = 1024;
  double prepare_ms = 0.5;
  gsw::Flags flags("workload_multi_thread",
                   "Several host threads, each training on its own stream.");
  flags.Add("steps", &steps, "training steps per thread");
  flags.Add("threads", &threads, "host threads (one stream each)");
  flags.Add("layers", &layers, "model layers per thread; one step is (layers+1) ms of device time");
  flags.Add("prepare-ms", &prepare_ms, "host CPU time per step per thread");
  flags.Add("batch-kib", &batch_kib, "batch size per thread in KiB");
  flags.Parse(argc, argv);

  const int width = static_cast<int>(batch_kib * 1024 / sizeof(float));
  std::vector<WorkerResult> results(static_cast<size_t>(threads));
  std::vector<std::thread> workers;
  const uint64_t start = gsw::NowNs();
  for (long t = 0; t < threads; ++t) {
    workers.emplace_back(worker_loop, static_cast<int>(t), steps, static_cast<int>(layers), width,
                         prepare_ms, &results[static_cast<size_t>(t)]);
  }
  for (std::thread& w : workers) w.join();
  GSW_CHECK(cudaDeviceSynchronize());
  const uint64_t end = gsw::NowNs();

  float checksum = 0.0f;
  for (const WorkerResult& r : results) checksum += r.checksum;
  gsw::Summary("multi_thread")
      .Add("threads", threads)
      .Add("steps", steps)
      .Add("wall_ms", gsw::MsBetween(start, end))
      .Add("kernels", threads * steps * gsw::MlpKernelsPerStep(static_cast<int>(layers)))
      .Add("checksum", static_cast<double>(checksum))
      .Print();
  return 0;
}
