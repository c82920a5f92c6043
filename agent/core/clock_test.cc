// The TSC line (clock.h): its fit on made-up pairs, then the process's clock against the kernel's.
#include "agent/core/clock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>

namespace gs {
namespace {

// A made-up machine: a 2.6 GHz TSC and a kernel clock that runs `ppm` fast or slow against it
// from the tick `change_tsc` on.
struct FakeMachine {
  double ticks_per_ns = 2.6;
  double ppm = 0;
  uint64_t tsc0 = 1000000000000ull;
  uint64_t ns0 = 5000000000ull;
  uint64_t change_tsc = 0;
  uint64_t TscAt(double ns_since) const { return tsc0 + static_cast<uint64_t>(ns_since * ticks_per_ns); }
  uint64_t KernelNsAt(uint64_t tsc) const {
    const double changed = tsc > change_tsc ? static_cast<double>(tsc - change_tsc) / ticks_per_ns : 0.0;
    return ns0 + static_cast<uint64_t>(static_cast<double>(tsc - tsc0) / ticks_per_ns + changed * ppm * 1e-6);
  }
};

// Pairs every 10 ms from `from` to `until` (ns since the machine's tsc0), as the writer's drains
// take them, each published at once. Returns where the next drain would be.
double FeedDrains(const FakeMachine& m, double from, double until, TscLineFitter* fitter, TscLine* line) {
  for (; from <= until; from += 10e6) {
    const uint64_t t = m.TscAt(from);
    fitter->Add(t, m.KernelNsAt(t), t, line);
  }
  return from;
}

int64_t LineError(const TscLine& line, const FakeMachine& m, uint64_t tsc) {
  TscLine::Params p{};  // zero if Load fails (its EXPECT says so)
  EXPECT_TRUE(line.Load(&p));
  return static_cast<int64_t>(TscLine::ToNs(p, tsc)) - static_cast<int64_t>(m.KernelNsAt(tsc));
}

TEST(TscLineFitterTest, NoLineUntilTheBaselineIsLongEnoughThenExact) {
  FakeMachine m;
  TscLine line;
  TscLineFitter fitter;
  TscLine::Params p;
  uint64_t t = m.TscAt(0);
  EXPECT_EQ(fitter.Add(t, m.KernelNsAt(t), t, &line), TscLineFitter::Result::kWaiting);
  t = m.TscAt(1e6);  // 1 ms: too short a baseline
  EXPECT_EQ(fitter.Add(t, m.KernelNsAt(t), t, &line), TscLineFitter::Result::kWaiting);
  EXPECT_FALSE(line.Load(&p));
  t = m.TscAt(10e6);
  EXPECT_EQ(fitter.Add(t, m.KernelNsAt(t), t, &line), TscLineFitter::Result::kFitted);
  ASSERT_TRUE(line.Load(&p));
  for (double ns : {10e6, 11e6, 50e6, 1e9}) EXPECT_LE(std::abs(LineError(line, m, m.TscAt(ns))), 2) << ns;
}

TEST(TscLineFitterTest, RefitsFollowAKernelClockThatChangesPaceWithoutAStep) {
  FakeMachine m;
  TscLine line;
  TscLineFitter fitter;
  double now = FeedDrains(m, 0, 100e6, &fitter, &line);
  // NTP slews the kernel's clock 200 ppm fast from here on (the most it does is 500).
  m.change_tsc = m.TscAt(now);
  m.ppm = 200;
  int64_t worst = 0, last = 0;
  for (int i = 0; i < 300; ++i, now += 10e6) {  // 3 s of drains, 10 ms apart
    const uint64_t t = m.TscAt(now);
    const uint64_t later = m.TscAt(now + 3000);  // the refit is published 3 µs after its pair
    TscLine::Params before;
    ASSERT_TRUE(line.Load(&before));
    ASSERT_EQ(fitter.Add(t, m.KernelNsAt(t), later, &line), TscLineFitter::Result::kFitted);
    TscLine::Params after;
    ASSERT_TRUE(line.Load(&after));
    // No step where the new line takes over, and time goes on from there.
    EXPECT_EQ(TscLine::ToNs(after, later), TscLine::ToNs(before, later));
    EXPECT_GT(TscLine::ToNs(after, later + 1000), TscLine::ToNs(before, later));
    last = LineError(line, m, m.TscAt(now + 5e6));
    worst = std::max(worst, std::abs(last));
  }
  // 200 ppm is 2 µs per 10 ms drain: the line follows within a few µs while its slope catches up
  // (the slope is measured over the last 1-2 s), and once it has, within a few ns.
  EXPECT_LT(worst, 6000);
  EXPECT_LT(std::abs(last), 50);
}

TEST(TscLineFitterTest, AJumpOfTheTscGivesTheLineUpForGood) {
  FakeMachine m;
  TscLine line;
  TscLineFitter fitter;
  FeedDrains(m, 0, 50e6, &fitter, &line);
  TscLine::Params p;
  ASSERT_TRUE(line.Load(&p));
  // The kernel's clock 5 ms ahead of where the TSC says (a VM moved to another host).
  uint64_t t = m.TscAt(60e6);
  EXPECT_EQ(fitter.Add(t, m.KernelNsAt(t) + 5000000, t, &line), TscLineFitter::Result::kGaveUp);
  EXPECT_FALSE(line.Load(&p));
  t = m.TscAt(70e6);
  EXPECT_EQ(fitter.Add(t, m.KernelNsAt(t), t, &line), TscLineFitter::Result::kGaveUp);
  EXPECT_FALSE(line.Load(&p));
}

TEST(TscLineFitterTest, AfterDormantHoursDriftIsNotAJump) {
  FakeMachine m;
  TscLine line;
  TscLineFitter fitter;
  FeedDrains(m, 0, 50e6, &fitter, &line);
  // Two hours without a refit (no capture window open), the kernel's clock 20 ppm off the fit:
  // 144 ms apart, which a refit takes back; 1 ms would have been a jump after 10 ms.
  const double later = 2 * 3600e9;
  const uint64_t t = m.TscAt(later);
  const uint64_t kernel = m.KernelNsAt(t) + static_cast<uint64_t>(later * 20e-6);
  EXPECT_EQ(fitter.Add(t, kernel, t, &line), TscLineFitter::Result::kFitted);
}

TEST(TscLineFitterTest, ATscThatGoesBackwardsIsGivenUp) {
  FakeMachine m;
  TscLine line;
  TscLineFitter fitter;
  const uint64_t t = m.TscAt(10e6);
  fitter.Add(t, m.KernelNsAt(t), t, &line);
  EXPECT_EQ(fitter.Add(t - 100, m.KernelNsAt(t) + 10000000, t, &line), TscLineFitter::Result::kGaveUp);
}

// The process's clock on this machine. Where the TSC is refused (another clocksource, no invariant
// TSC), MonotonicNs is clock_gettime and only the bracket check means anything.
TEST(MonotonicClockTest, AgreesWithTheKernelsClockAndNeverRunsBackwardsWhileRefitted) {
  const char* refusal = StartTscClock(true);
  for (int i = 0; i < 30; ++i) {  // 60 ms of pairs, as the writer's drains would take them
    AnchorTscClock();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  TscLine::Params p;
  EXPECT_EQ(g_tsc_line.Load(&p), refusal == nullptr) << (refusal ? refusal : "");
  for (int i = 0; i < 10000; ++i) {
    const uint64_t before = SystemMonotonicNs();
    const uint64_t ours = MonotonicNs();
    const uint64_t after = SystemMonotonicNs();
    // The line runs up to a pair's width ahead of the kernel's clock, and a preempted read may
    // land anywhere between the two kernel reads.
    ASSERT_GE(ours + 2000, before);
    ASSERT_LE(ours, after + 2000);
  }
  std::atomic<bool> stop{false};
  std::thread refitter([&] {
    while (!stop.load()) {
      AnchorTscClock();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  uint64_t previous = MonotonicNs();
  uint64_t backwards = 0;
  const uint64_t end = SystemMonotonicNs() + 200000000;
  while (SystemMonotonicNs() < end) {
    const uint64_t now = MonotonicNs();
    if (now < previous) backwards = std::max(backwards, previous - now);
    previous = now;
  }
  stop = true;
  refitter.join();
  // A reader that read the TSC between a refit's start and its publication has the old line's
  // value, within a few ns of the new one's (clock.h).
  EXPECT_LE(backwards, 20u);
}

}  // namespace
}  // namespace gs
