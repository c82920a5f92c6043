// host_wait_cost — what the blocking-call wrappers (GS_HOST_WAITS, shim/host_wait_interposers.cc)
// add to a libc call, for BENCHMARKS.md. tests/bench/run_host_wait_bench runs it with and without
// LD_PRELOAD=libgsagent.so and with different settings, interleaved, in one go.
//
//   host_wait_cost read  N DEPTH   N reads of 1 byte from /dev/zero (~0.15 us: the wrapper's fast
//                                  path plus its two clock reads; nothing is recorded)
//   host_wait_cost other N DEPTH   as `read`, on a thread that makes no CUDA call (whose waits the
//                                  agent does not record unless GS_SAMPLE_ALL_THREADS=1)
//   host_wait_cost big   N DEPTH   N reads of 64 KiB from /dev/zero (a few us of kernel time, all
//                                  CPU: every one is recorded when GS_WAIT_MIN_US=1, so the
//                                  difference to the default is the cost of one recorded wait,
//                                  stack included, without a real sleep's scheduling noise)
// DEPTH: frames of recursion above the loop (the stack a recorded wait captures).
// Prints "<wall ns per call> <thread CPU ns per call>" (median of 5 runs of N).
//
// A CUDA call first: the agent activates on the first CUDA call and records the waits of threads
// that make CUDA calls. Calls come in bursts of 256 with 12 ms pauses, so that recorded waits never
// overflow the thread's ring between two drains.
#include <cuda_runtime_api.h>

#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <thread>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

double Now(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

struct Cost {
  double wall_ns, cpu_ns;
};

char g_buffer[65536];

__attribute__((noinline)) Cost TimedLoop(int depth, size_t bytes, int fd, long iterations) {
  if (depth > 0) {
    Cost c = TimedLoop(depth - 1, bytes, fd, iterations);
    asm volatile("" ::: "memory");  // keep the recursion: no tail call
    return c;
  }
  constexpr long kBurst = 256;
  const timespec pause = {0, 12'000'000};
  double wall = 0, cpu = 0;
  for (long done = 0; done < iterations;) {
    const long n = std::min(kBurst, iterations - done);
    const double w0 = Now(CLOCK_MONOTONIC), c0 = Now(CLOCK_THREAD_CPUTIME_ID);
    for (long i = 0; i < n; ++i) {
      if (read(fd, g_buffer, bytes) != static_cast<ssize_t>(bytes)) std::abort();
    }
    cpu += Now(CLOCK_THREAD_CPUTIME_ID) - c0;
    wall += Now(CLOCK_MONOTONIC) - w0;
    done += n;
    syscall(SYS_nanosleep, &pause, nullptr);  // not through the wrapper: never recorded
  }
  return {wall / static_cast<double>(iterations), cpu / static_cast<double>(iterations)};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || (std::strcmp(argv[1], "read") != 0 && std::strcmp(argv[1], "big") != 0 &&
                    std::strcmp(argv[1], "other") != 0)) {
    std::fprintf(stderr, "usage: host_wait_cost read|other|big [N] [DEPTH]\n");
    return 2;
  }
  const size_t bytes = std::strcmp(argv[1], "big") == 0 ? sizeof(g_buffer) : 1;
  const long iterations = argc > 2 ? std::atol(argv[2]) : 25600;
  const int depth = argc > 3 ? std::atoi(argv[3]) : 0;
  void* p = nullptr;
  if (cudaMalloc(&p, 256) != cudaSuccess) {
    std::fprintf(stderr, "host_wait_cost: cudaMalloc failed\n");
    return 1;
  }
  const int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 1;
  std::vector<double> wall, cpu;
  auto measure = [&] {
    TimedLoop(depth, bytes, fd, iterations / 10);  // warm up
    for (int r = 0; r < 5; ++r) {
      const Cost c = TimedLoop(depth, bytes, fd, iterations);
      wall.push_back(c.wall_ns);
      cpu.push_back(c.cpu_ns);
    }
  };
  if (std::strcmp(argv[1], "other") == 0) {
    std::thread(measure).join();
  } else {
    measure();
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  std::printf("%.1f %.1f\n", wall[2], cpu[2]);
  cudaFree(p);
  return 0;
}
