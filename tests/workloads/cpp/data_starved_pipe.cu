// data_starved_pipe — data_starved whose input arrives slowly through a pipe: a writer thread
// produces a batch every --produce-ms (default 20 ms, waiting as a slow disk or network would) and
// writes it into a pipe; the training thread blocks in read() inside read_batch_from_pipe(), then
// stages the batch in pinned memory, copies it H2D (async) and enqueues the step's kernels (5 ms).
// The C++ twin of py/data_starved_pipe.py (whose writer is a child process; a thread here, which
// the sampler does not sample: only the thread that issues CUDA work is).
//
// Expected verdict: GPU utilisation ~ 5/20 ~ 25%; the idle time is the training thread blocked in
// I/O (a read on a pipe) in read_batch_from_pipe(), which makes no CUDA call: only the sampler's
// stacks of the blocked thread can name it.
#include <cuda_runtime.h>
#include <unistd.h>

#include <cmath>
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

}  // namespace

// PLANTED: the training thread waits on a slow producer, reading the batch from a pipe.
GSW_PLANTED void read_batch_from_pipe(int fd, char* batch, size_t bytes) {
  for (size_t got = 0; got < bytes;) {
    const ssize_t n = read(fd, batch + got, bytes - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::fprintf(stderr, "data_starved_pipe: the writer closed the pipe after %zu of %zu bytes\n", got, bytes);
      std::exit(1);
    }
    got += static_cast<size_t>(n);
  }
}

int main(int argc, char** argv) {
  long steps = 40, layers = 4, batch_kib = 1024;
  double produce_ms = 20.0;
  gsw::Flags flags("workload_data_starved_pipe",
                   "A training loop starved by input read from a slow pipe (read_batch_from_pipe).");
  flags.Add("steps", &steps, "training steps");
  flags.Add("produce-ms", &produce_ms, "time the writer takes to produce one batch");
  flags.Add("layers", &layers, "model layers; one step is (layers+1) ms of device time");
  flags.Add("batch-kib", &batch_kib, "batch size in KiB (written through the pipe, copied H2D)");
  flags.Parse(argc, argv);

  const int width = static_cast<int>(batch_kib * 1024 / sizeof(float));
  gsw::Mlp model(static_cast<int>(layers), width);
  const size_t bytes = model.input_bytes();
  int fds[2];
  if (pipe(fds) != 0) {
    std::perror("data_starved_pipe: pipe");
    return 1;
  }
  std::thread writer([&] {
    std::vector<char> batch(bytes);
    for (long step = 0; step < steps; ++step) {
      SleepMs(produce_ms);  // the slow source
      std::memset(batch.data(), static_cast<int>(step & 0xff), bytes);
      for (size_t off = 0; off < bytes;) {
        const ssize_t n = write(fds[1], batch.data() + off, bytes - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) std::exit(1);
        off += static_cast<size_t>(n);
      }
    }
  });

  cudaStream_t stream;
  GSW_CHECK(cudaStreamCreate(&stream));
  gsw::PinnedStaging staging(bytes);
  std::vector<char> batch(bytes);
  const uint64_t start = gsw::NowNs();
  uint64_t read_ns = 0;
  for (long step = 0; step < steps; ++step) {
    staging.WaitForSlot(step);
    const uint64_t t0 = gsw::NowNs();
    read_batch_from_pipe(fds[0], batch.data(), bytes);
    read_ns += gsw::NowNs() - t0;
    staging.Upload(step, batch.data(), model.input(), stream);
    model.EnqueueStep(stream);
  }
  GSW_CHECK(cudaStreamSynchronize(stream));
  const uint64_t end = gsw::NowNs();
  writer.join();
  close(fds[0]);
  close(fds[1]);
  GSW_CHECK(cudaStreamDestroy(stream));
  gsw::Summary("data_starved_pipe")
      .Add("steps", steps)
      .Add("wall_ms", gsw::MsBetween(start, end))
      .Add("read_batch_ms", static_cast<double>(read_ns) / 1e6)
      .Add("gpu_ms_per_step", gsw::MlpStepMs(static_cast<int>(layers)))
      .Add("kernels", steps * gsw::MlpKernelsPerStep(static_cast<int>(layers)))
      .Print();
  return 0;
}
