#include "timestamp_clock.h"

#include <time.h>

#include <atomic>

namespace simgpu_cupti {
namespace {

uint64_t ReadClock(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Immutable once published; old mappings are leaked because a reader may still hold one.
struct ClockMapping {
  CUpti_TimestampCallbackFunc callback;  // nullptr: CLOCK_REALTIME
  int64_t offset_ns;                     // target clock - CLOCK_MONOTONIC
};

uint64_t ReadTarget(const ClockMapping& m) {
  return m.callback != nullptr ? m.callback() : ReadClock(CLOCK_REALTIME);
}

const ClockMapping* MakeMapping(CUpti_TimestampCallbackFunc callback) {
  auto* m = new ClockMapping{callback, 0};
  // Best of a few brackets: the narrowest monotonic window around one target reading.
  uint64_t best_window = UINT64_MAX;
  for (int i = 0; i < 5; ++i) {
    uint64_t before = ReadClock(CLOCK_MONOTONIC);
    uint64_t target = ReadTarget(*m);
    uint64_t after = ReadClock(CLOCK_MONOTONIC);
    if (after - before < best_window) {
      best_window = after - before;
      m->offset_ns = static_cast<int64_t>(target - (before + (after - before) / 2));
    }
  }
  return m;
}

std::atomic<const ClockMapping*> g_mapping{nullptr};

const ClockMapping& CurrentMapping() {
  const ClockMapping* m = g_mapping.load(std::memory_order_acquire);
  if (m != nullptr) return *m;
  const ClockMapping* fresh = MakeMapping(nullptr);
  const ClockMapping* expected = nullptr;
  if (!g_mapping.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) {
    delete fresh;  // another thread won; never published, so safe to free
    return *expected;
  }
  return *fresh;
}

}  // namespace

uint64_t TimestampNow() { return ReadTarget(CurrentMapping()); }

uint64_t TimestampFromMonotonic(uint64_t monotonic_ns) {
  if (monotonic_ns == 0) return 0;
  return static_cast<uint64_t>(static_cast<int64_t>(monotonic_ns) + CurrentMapping().offset_ns);
}

void SetTimestampCallback(CUpti_TimestampCallbackFunc callback) {
  g_mapping.store(MakeMapping(callback), std::memory_order_release);
}

}  // namespace simgpu_cupti
