// clock.cc — the TSC line's fit and the process's one line (clock.h says why).
#include "agent/core/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <mutex>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace gs {

TscLine g_tsc_line;

namespace {

using u128 = unsigned __int128;

// ns per tick over [a, b], 32.32 fixed point.
uint64_t Slope(uint64_t tsc_a, uint64_t ns_a, uint64_t tsc_b, uint64_t ns_b) {
  return static_cast<uint64_t>((static_cast<u128>(ns_b - ns_a) << 32) / (tsc_b - tsc_a));
}

}  // namespace

TscLineFitter::Result TscLineFitter::Add(uint64_t tsc, uint64_t ns, uint64_t now_tsc, TscLine* line) {
  if (gave_up_) return Result::kGaveUp;
  auto give_up = [&] {
    gave_up_ = true;
    line->Publish(TscLine::Params{0, 0, 0});
    return Result::kGaveUp;
  };
  if (!have_first_) {
    have_first_ = true;
    first_tsc_ = mid_tsc_ = tsc;
    first_ns_ = mid_ns_ = ns;
    last_ns_ = ns;
    return Result::kWaiting;
  }
  if (tsc <= first_tsc_ || ns <= first_ns_ || now_tsc < tsc) return give_up();  // the TSC went backwards
  // The slope over the last 1-2 s (the first pair's until then): long enough that a pair's jitter
  // is a few hundredths of a ppm, short enough to follow NTP when it changes the kernel's pace.
  if (ns - first_ns_ >= 2 * kSlopeWindowNs) {
    first_tsc_ = mid_tsc_;
    first_ns_ = mid_ns_;
    mid_tsc_ = tsc;
    mid_ns_ = ns;
  } else if (ns - mid_ns_ >= kSlopeWindowNs && mid_ns_ == first_ns_) {
    mid_tsc_ = tsc;
    mid_ns_ = ns;
  }
  const uint64_t slope = Slope(first_tsc_, first_ns_, tsc, ns);
  TscLine::Params current;
  if (!line->Load(&current)) {
    if (ns - first_ns_ < kMinBaselineNs) return Result::kWaiting;
    line->Publish(TscLine::Params{tsc, ns, slope});
    last_ns_ = ns;
    return Result::kFitted;
  }
  // The kernel's clock against the current line at the pair, then the new line: from where the
  // current one stands at `now_tsc` (no step), steering onto the kernel's clock over the next
  // interval like the last one (at least kSteerNs): a line aimed at a point 20 ms out would
  // overshoot by the error times the ratio if the writer came back later.
  const int64_t error = static_cast<int64_t>(ns - TscLine::ToNs(current, tsc));
  const uint64_t since_last = ns - last_ns_;
  const int64_t allowed = static_cast<int64_t>(kMaxErrorNs + since_last / 1000000 * kMaxDriftPpm);
  if (error > allowed || error < -allowed) return give_up();
  const uint64_t steer = since_last > kSteerNs ? since_last : kSteerNs;
  // ns per tick that take the error away over `steer`: error / (steer / slope ticks).
  const __int128 correction = static_cast<__int128>(error) * static_cast<__int128>(slope) /
                              static_cast<__int128>(steer);
  __int128 mult = static_cast<__int128>(slope) + correction;
  if (mult < static_cast<__int128>(slope / 2)) mult = slope / 2;  // never stalls or turns back
  line->Publish(TscLine::Params{now_tsc, TscLine::ToNs(current, now_tsc), static_cast<uint64_t>(mult)});
  last_ns_ = ns;
  return Result::kFitted;
}

namespace {

std::mutex g_mu;  // serialises the fitter
std::atomic<bool> g_started{false};
std::atomic<const char*> g_refusal{nullptr};
TscLineFitter g_fitter;

bool InvariantTsc() {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (static_cast<unsigned>(__get_cpuid_max(0x80000000u, nullptr)) < 0x80000007u) return false;
  __cpuid(0x80000007u, a, b, c, d);
  return (d & (1u << 8)) != 0;  // "Invariant TSC" (Intel SDM vol. 2, CPUID leaf 80000007H)
#else
  return false;
#endif
}

// The TSC is only as good as the kernel's trust in it: a kernel that found it unstable (and moved
// to hpet, acpi_pm or kvm-clock) keeps CLOCK_MONOTONIC elsewhere.
bool KernelClockIsTsc() {
  const int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[32] = {};
  const ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  return n >= 3 && std::strncmp(buf, "tsc", 3) == 0 && (n == 3 || buf[3] == '\n');
}

// One (TSC, clock_gettime) pair: the tightest of eight reads (the TSC read just before and just
// after the clock read), placed at the midpoint of its two TSC reads; none when every read took
// more than ~1.5 µs at 2.6 GHz (preempted, or the VM descheduled). A pair placed at the first TSC
// read of any read that came along misplaced it by up to that window, ~1 µs on a loaded VM, and
// the first line's slope (fitted over kMinBaselineNs) carried that as hundreds of ppm: trace
// timestamps up to a few µs off the kernel's clock in a process's first tens of ms.
bool TakePair(uint64_t* tsc, uint64_t* ns) {
  uint64_t best = ~uint64_t{0};
  for (int i = 0; i < 8; ++i) {
    const uint64_t t1 = ReadTscOrdered();
    const uint64_t n = SystemMonotonicNs();
    const uint64_t t2 = ReadTscOrdered();
    if (t2 - t1 < best) {
      best = t2 - t1;
      *tsc = t1 + (t2 - t1) / 2;
      *ns = n;
    }
  }
  return best < 4000;
}

}  // namespace

const char* StartTscClock(bool allowed) {
  // A forked child calls this again (its agent re-activates) and may have inherited g_mu locked by
  // the parent's writer thread: the answer is the parent's, read without the lock.
  if (g_started.load(std::memory_order_acquire)) return g_refusal.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_started.load(std::memory_order_relaxed)) return g_refusal.load(std::memory_order_relaxed);
  const int saved_errno = errno;
  const char* refusal = nullptr;
  if (!allowed) {
    refusal = "GS_CLOCK=system";
  } else if (!InvariantTsc()) {
    refusal = "the CPU reports no invariant TSC";
  } else if (!KernelClockIsTsc()) {
    refusal = "the kernel's clocksource is not the TSC";
  } else {
    uint64_t tsc = 0, ns = 0;
    if (TakePair(&tsc, &ns)) g_fitter.Add(tsc, ns, ReadTscOrdered(), &g_tsc_line);
  }
  errno = saved_errno;
  g_refusal.store(refusal, std::memory_order_release);
  g_started.store(true, std::memory_order_release);
  return refusal;
}

void AnchorTscClock() {
  if (!g_started.load(std::memory_order_acquire) || g_refusal.load(std::memory_order_acquire) != nullptr) return;
  // try_lock: see StartTscClock (a child whose lock is stuck keeps the line it inherited).
  std::unique_lock<std::mutex> lock(g_mu, std::try_to_lock);
  if (!lock.owns_lock()) return;
  uint64_t tsc = 0, ns = 0;
  if (!TakePair(&tsc, &ns)) return;
  if (g_fitter.Add(tsc, ns, ReadTscOrdered(), &g_tsc_line) == TscLineFitter::Result::kGaveUp)
    g_refusal.store("the TSC jumped against CLOCK_MONOTONIC", std::memory_order_release);
}

}  // namespace gs
