// clock.h — the agent's one clock: CLOCK_MONOTONIC in nanoseconds.
//
// Everything in a trace (host calls, GPU activities mapped by CUPTI's timestamp callback,
// samples) is on this clock. clock_gettime(CLOCK_MONOTONIC) is served by the vDSO on x86-64 Linux,
// so it costs ~20 ns and makes no system call (unless the kernel's clocksource is not
// vDSO-capable, e.g. some VMs with clocksource=hpet; then it is a syscall, still correct).
//
// Thread safety: stateless; safe anywhere, including signal handlers.
#ifndef GPUSTALL_AGENT_CORE_CLOCK_H_
#define GPUSTALL_AGENT_CORE_CLOCK_H_

#include <time.h>

#include <cstdint>

namespace gs {

inline uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

inline uint64_t ClockNs(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

// The Clock the Agent owns and passes down (tests substitute a fake). The hot path calls
// MonotonicNs() directly: the timestamps in ApiCallEvent are taken by the shim.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual uint64_t NowNs() const { return MonotonicNs(); }
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_CORE_CLOCK_H_
