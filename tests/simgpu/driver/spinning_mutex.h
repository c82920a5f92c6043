// spinning_mutex.h — the timeline's lock: spins a few microseconds before it sleeps.
//
// Why: every runtime call takes the timeline's lock several times (the sticky error, the stream,
// the copy bandwidth, the schedule) and the device thread takes it at each op's start and end,
// each time for well under a microsecond. A plain std::mutex puts a thread that finds it taken
// to sleep on a futex, and the wake-up comes tens of microseconds later on a loaded machine: in
// a loop of 3,840 asynchronous 32 KiB copies (workload_pageable_copies --pinned 1) the
// application's thread slept there at about one call in six, 60% of its context switches
// (`perf record -e sched:sched_switch --call-graph dwarf`), which made those calls 10-200 us
// long and let the device run dry. A driver's submission is not held up for that long by the
// GPU's own bookkeeping, so the stand-in must not be either. Spinning first, the lock is
// nearly always had while its holder finishes; a holder that was preempted still costs a
// sleep after the spin, never an unbounded spin.
#ifndef GPUSTALL_TESTS_SIMGPU_DRIVER_SPINNING_MUTEX_H_
#define GPUSTALL_TESTS_SIMGPU_DRIVER_SPINNING_MUTEX_H_

#include <mutex>

namespace simgpu {

class SpinningMutex {
 public:
  void lock() {
    // ~2-4 us of `pause` on current x86 cores, more than the timeline's longest hold.
    for (int i = 0; i < kSpins; ++i) {
      if (mu_.try_lock()) return;
      CpuRelax();
    }
    mu_.lock();
  }
  bool try_lock() { return mu_.try_lock(); }
  void unlock() { mu_.unlock(); }

  // One spin-wait step (`pause`): also WaitUntilNs's (config.cc), which the host costs and the
  // spinning host waits (timeline.cc, "Host waits") spin in.
  static void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }

 private:
  static constexpr int kSpins = 64;
  std::mutex mu_;
};

}  // namespace simgpu

#endif  // GPUSTALL_TESTS_SIMGPU_DRIVER_SPINNING_MUTEX_H_
