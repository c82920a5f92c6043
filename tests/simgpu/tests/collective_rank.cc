// collective_rank.cc — one rank of a simulated multi-process job, for collective_test.py.
//
// Each step: `compute` (simgpuKernel, --compute-us) then one all-reduce (simgpuCollective of group
// "world", --collective-us) on stream A, then a host wait for the stream. The rank named by
// --slow-rank sleeps --slow-ms on the host before each step (a late rank). With --side-kernel, each
// step also launches a kernel on a second stream right after the collective: it must run while
// the collective waits (streams are independent), and work that depends on the collective is
// held back: "after_event" on a third stream that waits (cudaStreamWaitEvent) on an event recorded
// behind the collective, and "after_malloc" on a fourth stream, launched after a cudaMalloc (a
// device barrier). Prints one line per step:
//   step=K sync_ns=<host time in cudaStreamSynchronize> result=<cudaError name>
// and exits 0, or 3 when a call failed (the failure is printed, the run continues to exercise
// the sticky error).
#include <cuda_runtime_api.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "simgpu.h"

namespace {
long Flag(int argc, char** argv, const char* name, long fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return std::atol(argv[i + 1]);
  }
  return fallback;
}
}  // namespace

int main(int argc, char** argv) {
  const long steps = Flag(argc, argv, "--steps", 3);
  const long slow_rank = Flag(argc, argv, "--slow-rank", -1);
  const long slow_ms = Flag(argc, argv, "--slow-ms", 0);
  const long compute_us = Flag(argc, argv, "--compute-us", 2000);
  const long collective_us = Flag(argc, argv, "--collective-us", 1000);
  const bool side_kernel = Flag(argc, argv, "--side-kernel", 0) != 0;
  const char* rank_env = std::getenv("RANK");
  const long rank = rank_env ? std::atol(rank_env) : 0;

  const void* compute = simgpuKernel("compute", static_cast<uint64_t>(compute_us) * 1000);
  const void* allreduce = simgpuCollective("world", static_cast<uint64_t>(collective_us) * 1000);
  const void* side = simgpuKernel("side", 1000000);  // 1 ms
  const void* after_event = simgpuKernel("after_event", 100000);
  const void* after_malloc = simgpuKernel("after_malloc", 100000);
  cudaStream_t a, b, c, d;
  cudaEvent_t reduced;
  if (cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking) != cudaSuccess ||
      cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking) != cudaSuccess ||
      cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking) != cudaSuccess ||
      cudaStreamCreateWithFlags(&d, cudaStreamNonBlocking) != cudaSuccess ||
      cudaEventCreateWithFlags(&reduced, cudaEventDisableTiming) != cudaSuccess) {
    std::fprintf(stderr, "stream creation failed\n");
    return 1;
  }
  int status = 0;
  for (long step = 0; step < steps; ++step) {
    if (rank == slow_rank && slow_ms > 0) {
      timespec ts{slow_ms / 1000, (slow_ms % 1000) * 1000000L};
      nanosleep(&ts, nullptr);
    }
    cudaError_t err = cudaLaunchKernel(compute, dim3(1), dim3(128), nullptr, 0, a);
    if (err == cudaSuccess) err = cudaLaunchKernel(allreduce, dim3(1), dim3(128), nullptr, 0, a);
    if (err == cudaSuccess && side_kernel) {
      err = cudaLaunchKernel(side, dim3(1), dim3(128), nullptr, 0, b);
      if (err == cudaSuccess) err = cudaEventRecord(reduced, a);
      if (err == cudaSuccess) err = cudaStreamWaitEvent(c, reduced, 0);
      if (err == cudaSuccess) err = cudaLaunchKernel(after_event, dim3(1), dim3(128), nullptr, 0, c);
      void* scratch = nullptr;  // leaked: cudaFree would synchronise the device
      if (err == cudaSuccess) err = cudaMalloc(&scratch, 256);
      if (err == cudaSuccess) err = cudaLaunchKernel(after_malloc, dim3(1), dim3(128), nullptr, 0, d);
    }
    timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cudaError_t sync = cudaStreamSynchronize(a);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (err == cudaSuccess) err = sync;
    long long sync_ns = (t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
    std::printf("step=%ld sync_ns=%lld result=%s\n", step, sync_ns, cudaGetErrorName(err));
    if (err != cudaSuccess) status = 3;
  }
  if (side_kernel) cudaDeviceSynchronize();
  std::fflush(stdout);
  return status;
}
