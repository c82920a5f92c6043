// data_starved_queue — data_starved fed by --workers loader threads that each take --fetch-ms per
// batch (sleeping, as on storage; staggered so that batches arrive every fetch-ms/workers, ~20 ms
// by default) and hand them over through a queue guarded by a mutex and a condition variable; the
// training thread blocks in the condition variable's wait (a futex) inside
// get_batch_from_workers(), then stages the batch in pinned memory, copies it H2D (async) and
// enqueues the step's kernels (5 ms). The C++ twin of py/data_starved_queue.py.
//
// Expected verdict: GPU utilisation ~ 5/20 ~ 25%; the idle time is the training thread's lock
// wait in get_batch_from_workers(), which makes no CUDA call: only the sampler's stacks of the
// blocked thread can name it.
#include <cuda_runtime.h>

#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "mlp.cuh"
#include "workload.h"

GSW_SIMULATED_KERNEL_DURATIONS(GSW_MLP_SIMULATED_DURATIONS)

namespace {

void SleepMs(double ms) {  // the whole interval, across any EINTR
  timespec left{static_cast<time_t>(ms / 1000), static_cast<long>(std::fmod(ms, 1000.0) * 1e6)};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

struct BatchQueue {
  std::mutex mu;
  std::condition_variable ready;
  std::deque<std::vector<char>> batches;
};

}  // namespace

// PLANTED: the training thread waits for the loaders, on the queue's condition variable.
GSW_PLANTED std::vector<char> get_batch_from_workers(BatchQueue* queue) {
  std::unique_lock<std::mutex> lock(queue->mu);
  queue->ready.wait(lock, [queue] { return !queue->batches.empty(); });
  std::vector<char> batch = std::move(queue->batches.front());
  queue->batches.pop_front();
  return batch;
}

int main(int argc, char** argv) {
  long steps = 40, layers = 4, batch_kib = 1024, workers = 2;
  double fetch_ms = 40.0;
  gsw::Flags flags("workload_data_starved_queue",
                   "A training loop starved by slow loader threads behind a queue "
                   "(get_batch_from_workers).");
  flags.Add("steps", &steps, "training steps");
  flags.Add("workers", &workers, "loader threads");
  flags.Add("fetch-ms", &fetch_ms, "time one loader takes to fetch one batch");
  flags.Add("layers", &layers, "model layers; one step is (layers+1) ms of device time");
  flags.Add("batch-kib", &batch_kib, "batch size in KiB (copied H2D from pinned memory)");
  flags.Parse(argc, argv);
  if (workers < 1) {
    std::fprintf(stderr, "workload_data_starved_queue: --workers must be at least 1\n");
    return 2;
  }

  const int width = static_cast<int>(batch_kib * 1024 / sizeof(float));
  gsw::Mlp model(static_cast<int>(layers), width);
  const size_t bytes = model.input_bytes();
  BatchQueue queue;
  std::vector<std::thread> loaders;
  for (long w = 0; w < workers; ++w) {
    loaders.emplace_back([&, w] {
      SleepMs(fetch_ms * static_cast<double>(w) / static_cast<double>(workers));  // staggered
      for (long step = w; step < steps; step += workers) {
        SleepMs(fetch_ms);  // the slow storage
        std::vector<char> batch(bytes, static_cast<char>(step & 0xff));
        std::lock_guard<std::mutex> lock(queue.mu);
        queue.batches.push_back(std::move(batch));
        queue.ready.notify_one();
      }
    });
  }

  cudaStream_t stream;
  GSW_CHECK(cudaStreamCreate(&stream));
  gsw::PinnedStaging staging(bytes);
  const uint64_t start = gsw::NowNs();
  uint64_t get_ns = 0;
  for (long step = 0; step < steps; ++step) {
    staging.WaitForSlot(step);
    const uint64_t t0 = gsw::NowNs();
    const std::vector<char> batch = get_batch_from_workers(&queue);
    get_ns += gsw::NowNs() - t0;
    staging.Upload(step, batch.data(), model.input(), stream);
    model.EnqueueStep(stream);
  }
  GSW_CHECK(cudaStreamSynchronize(stream));
  const uint64_t end = gsw::NowNs();
  for (std::thread& t : loaders) t.join();
  GSW_CHECK(cudaStreamDestroy(stream));
  gsw::Summary("data_starved_queue")
      .Add("steps", steps)
      .Add("wall_ms", gsw::MsBetween(start, end))
      .Add("get_batch_ms", static_cast<double>(get_ns) / 1e6)
      .Add("gpu_ms_per_step", gsw::MlpStepMs(static_cast<int>(layers)))
      .Add("kernels", steps * gsw::MlpKernelsPerStep(static_cast<int>(layers)))
      .Print();
  return 0;
}
