// sync_heavy — every step reads the loss back with a blocking 4-byte cudaMemcpy (like PyTorch's
// loss.item()) in read_loss(), then does host work in log_metrics() that could have overlapped
// the next step's GPU work but cannot, because the host only submits that step afterwards.
//
// Each step: 7 kernels (layers=2: 3 ms of device time) on the legacy default stream, read_loss()
// (waits for them), log_metrics() (default 7 ms of real CPU work; with --sleep-ms it then sleeps
// that long too, as bookkeeping that waits on a timer would).
//
// Expected verdict: GPU utilisation ~ 3 / (3 + 7) ~ 30%; the idle time is host work in
// log_metrics() that began when the synchronisation in read_loss() returned ("after sync").
//
// A second problem for what-if checks (--pageable-samples N, default none): each step first
// uploads N samples one by one from pageable memory (upload_samples), each copy holding the host
// until its transfer is done, as pageable_copies does; --pinned 1 puts them in pinned memory.
// With both, the report has two predicted fixes whose order tests/bench/run_whatif_pairs sets
// against the fixed runs' gains.
#include <cuda_runtime.h>

#include <time.h>

#include <cerrno>
#include <cstdio>
#include <vector>

#include "mlp.cuh"
#include "workload.h"

GSW_SIMULATED_KERNEL_DURATIONS(GSW_MLP_SIMULATED_DURATIONS)

// PLANTED: a blocking device-to-host read of one float after every step.
GSW_PLANTED float read_loss(const float* device_loss) {
  float loss = 0.0f;
  GSW_CHECK(cudaMemcpy(&loss, device_loss, sizeof loss, cudaMemcpyDeviceToHost));
  return loss;
}

// PLANTED: metrics computed on the host while the GPU has nothing queued.
GSW_PLANTED float log_metrics(long step, float loss, std::vector<float>* history, double log_ms,
                              double sleep_ms) {
  history->push_back(loss + static_cast<float>(step));
  const float checksum = gsw::CpuWork(history->data(), history->size(), log_ms);
  if (sleep_ms > 0) {  // the thread sleeps in the kernel (nanosleep): a sampler sees it asleep
    const long ns = static_cast<long>(sleep_ms * 1e6);
    timespec left = {ns / 1000000000L, ns % 1000000000L};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
  }
  return checksum;
}

// PLANTED (--pageable-samples only): per-sample uploads; from pageable memory each call blocks.
GSW_PLANTED void upload_samples(float* device_batch, const std::vector<float*>& samples, size_t sample_floats) {
  size_t offset = 0;
  for (const float* sample : samples) {
    GSW_CHECK(cudaMemcpyAsync(device_batch + offset, sample, sample_floats * sizeof(float),
                              cudaMemcpyHostToDevice, 0));
    offset += sample_floats;
  }
}

int main(int argc, char** argv) {
  long steps = 60, layers = 2, width_kib = 1024, defer_read = 0, pageable_samples = 0, sample_kib = 8,
       pinned = 0;
  double log_ms = 7.0, sleep_ms = 0.0;
  gsw::Flags flags("workload_sync_heavy",
                   "A training loop that synchronises on the loss every step (read_loss) and "
                   "then does host work (log_metrics).");
  flags.Add("steps", &steps, "training steps");
  flags.Add("log-ms", &log_ms, "host CPU time of log_metrics() per step");
  flags.Add("sleep-ms", &sleep_ms, "then log_metrics() sleeps this long per step");
  flags.Add("layers", &layers, "model layers; one step is (layers+1) ms of device time");
  flags.Add("width-kib", &width_kib, "activation size per layer in KiB");
  flags.Add("defer-read", &defer_read,
            "1: copy the loss asynchronously into pinned memory and read it a step later (the fix, "
            "for what-if checks)");
  flags.Add("pageable-samples", &pageable_samples,
            "each step first uploads this many samples one by one from pageable memory");
  flags.Add("sample-kib", &sample_kib, "size of one such sample in KiB");
  flags.Add("pinned", &pinned, "1: those samples live in pinned memory (the fix, for what-if checks)");
  flags.Parse(argc, argv);

  gsw::Mlp model(static_cast<int>(layers), static_cast<int>(width_kib * 1024 / sizeof(float)));
  const size_t sample_floats = static_cast<size_t>(sample_kib) * 1024 / sizeof(float);
  if (static_cast<size_t>(pageable_samples) * sample_floats > static_cast<size_t>(width_kib) * 1024 / sizeof(float)) {
    std::fprintf(stderr, "workload_sync_heavy: --pageable-samples x --sample-kib exceeds --width-kib\n");
    return 2;
  }
  gsw::HostSamples host(pageable_samples, sample_floats, 0.5f, pinned != 0);
  const std::vector<float*>& samples = host.samples();
  std::vector<float> history;
  history.reserve(static_cast<size_t>(steps) + 1);
  GSW_CHECK(cudaDeviceSynchronize());  // set-up done: the loop starts from an idle device

  const uint64_t start = gsw::NowNs();
  uint64_t read_ns = 0, log_ns = 0;
  float last_loss = 0.0f, checksum = 0.0f;
  // --defer-read: two pinned slots and their events; step s reads step s-1's loss, whose copy the
  // device finished while the host was logging.
  float* pinned_loss = nullptr;
  cudaEvent_t copied[2] = {nullptr, nullptr};
  if (defer_read) {
    GSW_CHECK(cudaMallocHost(&pinned_loss, 2 * sizeof(float)));
    for (cudaEvent_t& e : copied) GSW_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  for (long step = 0; step < steps; ++step) {
    if (!samples.empty()) upload_samples(model.input(), samples, sample_floats);
    model.EnqueueStep(/*stream=*/0);
    const uint64_t t0 = gsw::NowNs();
    if (defer_read) {
      const int slot = static_cast<int>(step % 2);
      GSW_CHECK(cudaMemcpyAsync(&pinned_loss[slot], model.loss(), sizeof(float), cudaMemcpyDeviceToHost, 0));
      GSW_CHECK(cudaEventRecord(copied[slot], 0));
      if (step > 0) {
        GSW_CHECK(cudaEventSynchronize(copied[1 - slot]));
        last_loss = pinned_loss[1 - slot];
      }
    } else {
      last_loss = read_loss(model.loss());
    }
    const uint64_t t1 = gsw::NowNs();
    checksum += log_metrics(step, last_loss, &history, log_ms, sleep_ms);
    read_ns += t1 - t0;
    log_ns += gsw::NowNs() - t1;
  }
  GSW_CHECK(cudaDeviceSynchronize());
  const uint64_t end = gsw::NowNs();
  if (defer_read) {
    for (cudaEvent_t e : copied) GSW_CHECK(cudaEventDestroy(e));
    GSW_CHECK(cudaFreeHost(pinned_loss));
  }

  gsw::Summary("sync_heavy")
      .Add("steps", steps)
      .Add("wall_ms", gsw::MsBetween(start, end))
      .Add("read_loss_ms", static_cast<double>(read_ns) / 1e6)
      .Add("log_metrics_ms", static_cast<double>(log_ns) / 1e6)
      .Add("gpu_ms_per_step", gsw::MlpStepMs(static_cast<int>(layers)))
      .Add("kernels", steps * gsw::MlpKernelsPerStep(static_cast<int>(layers)))
      .Add("loss", static_cast<double>(last_loss))
      .Add("checksum", static_cast<double>(checksum))
      .Print();
  return 0;
}
