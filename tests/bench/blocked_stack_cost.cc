// blocked_stack_cost.cc — what one blocked-thread sample costs the sampler thread, side by side:
//   leaf only   read /proc/self/task/<tid>/syscall (the sampler's work per blocked sample with
//               GS_BLOCKED_STACKS=0: the leaf PC)
//   unwound     the same read, BlockedStackUnwinder::Unwind over a copy of the stack, and the
//               second read that checks the thread did not move (GS_BLOCKED_STACKS=1)
// for a thread blocked in read() under `depth` nested frames (each with a 512-byte local, so the
// stack to copy grows with the depth). Prints Markdown: median and p90 per sample, frames, bytes.
//
//   blocked_stack_cost [ITERATIONS]      (default 20000 per row)
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "agent/sampler/blocked_stack.h"
#include "agent/sampler/task_proc.h"

namespace {

uint64_t Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

std::atomic<uint64_t> g_tid{0};

__attribute__((noinline)) void Nest(int fd, int depth) {
  volatile char local[512];
  local[0] = static_cast<char>(depth);
  if (depth > 0) {
    Nest(fd, depth - 1);
  } else {
    g_tid.store(static_cast<uint64_t>(syscall(SYS_gettid)));
    char c;
    if (read(fd, &c, 1) < 0) std::abort();
  }
  asm volatile("" : : "r"(local[0]) : "memory");
}

struct Row {
  double median_ns, p90_ns;
};

Row Stats(std::vector<uint64_t>& v) {
  std::sort(v.begin(), v.end());
  return {static_cast<double>(v[v.size() / 2]), static_cast<double>(v[v.size() * 9 / 10])};
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 20000;
  gs::BlockedStackUnwinder unwinder;
  if (!unwinder.Init()) return 1;
  std::printf("| frames above read() | leaf only (median / p90) | unwound (median / p90) | frames | bytes copied |\n");
  std::printf("|---:|---:|---:|---:|---:|\n");
  for (int depth : {2, 20, 100}) {
    int fds[2];
    if (pipe(fds) != 0) return 1;
    g_tid.store(0);
    std::thread blocked([&] { Nest(fds[0], depth); });
    while (g_tid.load() == 0) usleep(1000);
    gs::TaskFiles files;
    if (!files.Open(g_tid.load())) return 1;
    gs::TaskSyscall call;
    do {
      usleep(1000);
      files.ReadSyscall(&call);
    } while (call.kind != gs::TaskSyscall::kInSyscall);
    std::vector<uint64_t> leaf, full;
    int frames = 0;
    size_t copied = 0;
    uint64_t pcs[130];
    for (int i = 0; i < iterations; ++i) {
      uint64_t t0 = Now();
      files.ReadSyscall(&call);
      const uint64_t t1 = Now();
      frames = unwinder.Unwind(call.sp, call.pc, pcs, 129, &copied);
      gs::TaskSyscall again;
      files.ReadSyscall(&again);
      const uint64_t t2 = Now();
      leaf.push_back(t1 - t0);
      full.push_back(t2 - t0);
      if (again.sp != call.sp) return 1;
    }
    const Row a = Stats(leaf), b = Stats(full);
    std::printf("| %d | %.1f / %.1f µs | %.1f / %.1f µs | %d | %zu |\n", depth + 2, a.median_ns / 1e3,
                a.p90_ns / 1e3, b.median_ns / 1e3, b.p90_ns / 1e3, frames, copied);
    if (write(fds[1], "x", 1) != 1) return 1;
    blocked.join();
    close(fds[0]);
    close(fds[1]);
  }
  return 0;
}
