// clock.h — the agent's one clock: CLOCK_MONOTONIC in nanoseconds, read from the TSC where it can
// be.
//
// Everything in a trace (host calls, GPU activities mapped by CUPTI's timestamp callback, samples,
// waits) is on this clock. clock_gettime(CLOCK_MONOTONIC) is served by the vDSO, but a wrapper
// reads it twice per call, and each read (a sequence lock, a fenced TSC read, the conversion) cost
// ~16 ns in a tight loop and up to ~45 ns in the short bursts of a real program on the development
// VMs: half of what a wrapper added without stacks (BENCHMARKS.md, "added cost per intercepted CUDA call"). So where
// the kernel itself keeps CLOCK_MONOTONIC on the TSC (clocksource "tsc", an invariant TSC), the
// agent reads the TSC and converts it with a line it fits to CLOCK_MONOTONIC: ns = base_ns +
// (tsc - base_tsc) * mult / 2^32.
//
// The line (TscLine) is refitted from (TSC, clock_gettime) pairs that the writer thread takes at
// every drain (10 ms): its slope over the last 1-2 s, and each refit starts where the previous
// line stands (no step, so time never runs backwards) and steers onto the kernel's clock over the
// next 20 ms or more. The kernel's own TSC-to-monotonic conversion is a line too, slewed by NTP at
// most 500 ppm, so the two stay within a fraction of a microsecond at a steady pace and within a
// few microseconds while NTP changes it (clock_test.cc); the
// line stays joinable with everything else on CLOCK_MONOTONIC (CUPTI's timestamps come through
// the agent's callback, cupti_session.cc; the simulated device's ground truth is on
// CLOCK_MONOTONIC). A pair that disagrees with the line by more than 1 ms (plus 100 ppm of the
// time since the previous pair: an on-demand agent's line runs unrefitted between windows), i.e.
// the TSC jumped (a VM migrated, the host resumed), switches the agent back to clock_gettime for
// good. GS_CLOCK=system
// does so from the start. Until the second pair (the first drain) calls read clock_gettime.
//
// Thread safety: MonotonicNs is lock-free and safe anywhere, signal handlers included (it never
// waits for a refit: TscLine::Load). StartTscClock and AnchorTscClock: the agent's
// activation and writer threads, serialised by a mutex inside.
#ifndef GPUSTALL_AGENT_CORE_CLOCK_H_
#define GPUSTALL_AGENT_CORE_CLOCK_H_

#include <time.h>

#include <atomic>
#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace gs {

inline uint64_t ClockNs(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

// The kernel's CLOCK_MONOTONIC, always through clock_gettime.
inline uint64_t SystemMonotonicNs() { return ClockNs(CLOCK_MONOTONIC); }

// The TSC as the hot path reads it: unfenced, so the read may run ahead of the instructions before
// it that have not finished (a pending cache miss: tens of ns at most). The kernel's vDSO fences
// it (lfence; rdtsc), and the fence is what made a clock_gettime cost ~16 ns here against ~7.5
// for the bare read (tests/bench/run_intercept_bench's machine): a timestamp a few ns early does
// not move a CUDA call or a gap of microseconds, and the fitted line's pairs use the fenced read.
// 0 where there is no TSC.
inline uint64_t ReadTsc() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return 0;
#endif
}

// The TSC ordered after every instruction before it, for the (TSC, clock_gettime) pairs.
inline uint64_t ReadTscOrdered() {
#if defined(__x86_64__)
  _mm_lfence();
  return __rdtsc();
#else
  return 0;
#endif
}

// The fitted line from TSC ticks to CLOCK_MONOTONIC nanoseconds, published under a sequence lock.
// Pure arithmetic apart from Publish: tests drive it with made-up pairs (clock_test.cc).
class TscLine {
 public:
  struct Params {
    uint64_t base_tsc;
    uint64_t base_ns;
    uint64_t mult;  // ns per tick, 32.32 fixed point
  };

  static uint64_t ToNs(const Params& p, uint64_t tsc) {
    // Ticks before base (a thread that read the TSC just before a refit) count backwards.
    if (tsc >= p.base_tsc)
      return p.base_ns + static_cast<uint64_t>((static_cast<unsigned __int128>(tsc - p.base_tsc) * p.mult) >> 32);
    return p.base_ns - static_cast<uint64_t>((static_cast<unsigned __int128>(p.base_tsc - tsc) * p.mult) >> 32);
  }

  // The published line, or false while there is none (not fitted yet, or given up). Two copies,
  // each under its own sequence count, with an index to the newer (the kernel's own NMI-safe
  // clock read does the same): a refit writes the copy nobody is directed to, so a reader never
  // meets one being written unless a second refit starts while it reads (10 ms later); it then
  // retries, and only after several such races reads clock_gettime instead. Never waits, so a
  // signal handler that interrupts a refit cannot spin on it.
  bool Load(Params* out) const {
    for (int attempt = 0; attempt < 4; ++attempt) {
      const Copy& c = copies_[current_.load(std::memory_order_acquire) & 1u];
      const uint32_t s1 = c.seq.load(std::memory_order_acquire);
      if ((s1 & 1u) != 0) continue;
      out->base_tsc = c.base_tsc.load(std::memory_order_relaxed);
      out->base_ns = c.base_ns.load(std::memory_order_relaxed);
      out->mult = c.mult.load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);
      if (c.seq.load(std::memory_order_relaxed) == s1) return out->mult != 0;
    }
    return false;
  }

  // One writer at a time (the caller serialises). mult 0 withdraws the line.
  void Publish(const Params& p) {
    const uint32_t next = (current_.load(std::memory_order_relaxed) & 1u) ^ 1u;
    Copy& c = copies_[next];
    const uint32_t s = c.seq.load(std::memory_order_relaxed);
    c.seq.store(s + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    c.base_tsc.store(p.base_tsc, std::memory_order_relaxed);
    c.base_ns.store(p.base_ns, std::memory_order_relaxed);
    c.mult.store(p.mult, std::memory_order_relaxed);
    c.seq.store(s + 2, std::memory_order_release);
    current_.store(next, std::memory_order_release);
  }

 private:
  struct Copy {
    std::atomic<uint32_t> seq{0};  // odd while written
    std::atomic<uint64_t> base_tsc{0};
    std::atomic<uint64_t> base_ns{0};
    std::atomic<uint64_t> mult{0};  // 0: no line
  };
  Copy copies_[2];
  std::atomic<uint32_t> current_{0};
};

// Fits the line from (tsc, ns) pairs (see the file comment). Not thread-safe: StartTscClock and
// AnchorTscClock serialise the process's one fitter.
class TscLineFitter {
 public:
  // A pair disagreeing with the line by more than this gives the TSC up.
  static constexpr uint64_t kMaxErrorNs = 1000000;
  // The first line needs a baseline at least this long (a 30 ns jitter over it: 6 ppm).
  static constexpr uint64_t kMinBaselineNs = 5000000;
  // A refit steers onto the kernel's clock over this long.
  static constexpr uint64_t kSteerNs = 20000000;
  // The slope is measured over the last one to two of these.
  static constexpr uint64_t kSlopeWindowNs = 1000000000;

  // The error allowed grows with the time since the last pair by this much (ppm): the line runs
  // on through an on-demand agent's dormant hours, when nothing refits it.
  static constexpr uint64_t kMaxDriftPpm = 100;

  enum class Result { kWaiting, kFitted, kGaveUp };
  // `tsc` read just before `ns` (so the real time at `tsc` is at most `ns`); `now_tsc`, read just
  // before this call (>= tsc), is where a refitted line starts, so that a refit delayed after its
  // pair still starts where the current line stands at the moment it replaces it. `line` is
  // where the result goes. Once kGaveUp, always kGaveUp.
  Result Add(uint64_t tsc, uint64_t ns, uint64_t now_tsc, TscLine* line);

 private:
  bool have_first_ = false;
  bool gave_up_ = false;
  // The slope's reference pair (1-2 s old once the line has run that long) and its successor.
  uint64_t first_tsc_ = 0;
  uint64_t first_ns_ = 0;
  uint64_t mid_tsc_ = 0;
  uint64_t mid_ns_ = 0;
  uint64_t last_ns_ = 0;  // the previous pair's ns
};

// The process's line. Read by MonotonicNs inline.
extern TscLine g_tsc_line;

// The agent's clock.
inline uint64_t MonotonicNs() {
#if defined(__x86_64__)
  TscLine::Params p{0, 0, 0};
  if (__builtin_expect(g_tsc_line.Load(&p), 1)) return TscLine::ToNs(p, ReadTsc());
#endif
  return SystemMonotonicNs();
}

// Decides whether the TSC may be used (`allowed`: GS_CLOCK is not "system"; the CPU says the TSC
// is invariant; the kernel's clocksource is "tsc") and takes the first pair. Once per process:
// later calls return the first answer. nullptr when the TSC will be used, else why not (for a log
// line).
const char* StartTscClock(bool allowed);
// Takes a pair and refits the line (the writer thread, every drain). No-op when not started or
// refused.
void AnchorTscClock();

// The Clock the Agent owns and passes down (tests substitute a fake). The hot path calls
// MonotonicNs() directly: the timestamps in ApiCallEvent are taken by the shim.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual uint64_t NowNs() const { return MonotonicNs(); }
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_CORE_CLOCK_H_
