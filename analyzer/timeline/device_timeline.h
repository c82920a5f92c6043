// device_timeline.h — one device's busy timeline: the union of its kernels, copies and memsets on
// all streams, split into compute-busy (any kernel: what nvidia-smi's GPU-Util counts) and
// copy-busy (copies and memsets), plus compute utilisation sampled like `watch nvidia-smi`.
//
// Feed activities in non-decreasing start order (the ActivitySorter does that). Memory: O(1)
// plus one counter per utilisation sample period (6 per second of trace).
//
// Thread safety: none.
#ifndef GPUSTALL_ANALYZER_TIMELINE_DEVICE_TIMELINE_H_
#define GPUSTALL_ANALYZER_TIMELINE_DEVICE_TIMELINE_H_

#include <cstdint>
#include <vector>

#include "analyzer/timeline/interval_union.h"
#include "analyzer/model/types.h"

namespace gs::analyzer {

class DeviceTimeline {
 public:
  explicit DeviceTimeline(TimeNs sample_period_ns) : period_(sample_period_ns) {}

  struct Gap {
    TimeNs start = 0;
    TimeNs end = 0;
    TimeNs length() const { return end - start; }
  };

  // Adds one device-work activity (IsDeviceWork(kind)). Returns the idle gap that the activity
  // ends (length 0 when it starts while the device is busy, or when it is the first).
  Gap Add(const GpuActivity& a);

  bool started() const { return busy_.started(); }
  TimeNs first_start() const { return busy_.first_start(); }
  TimeNs last_end() const { return busy_.frontier(); }
  TimeNs busy_ns() const { return busy_.covered(); }
  TimeNs compute_busy_ns() const { return compute_.covered(); }
  TimeNs copy_busy_ns() const { return copy_.covered(); }
  uint64_t kernels() const { return kernels_; }
  uint64_t copies() const { return copies_; }
  uint64_t memsets() const { return memsets_; }

  // Compute utilisation (0..1) per sample period over [from, to): period i covers
  // [from + i*period, from + (i+1)*period); the last one may be partial and is scaled by its length.
  std::vector<double> UtilizationSamples(TimeNs from, TimeNs to) const;

 private:
  void AddComputeTime(TimeNs a, TimeNs b);
  TimeNs period_;
  IntervalUnion busy_, compute_, copy_;
  uint64_t kernels_ = 0, copies_ = 0, memsets_ = 0;
  // Compute-busy ns per absolute sample bin (bin = t / period_), starting at bin base_bin_.
  int64_t base_bin_ = 0;
  std::vector<TimeNs> bins_;
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_TIMELINE_DEVICE_TIMELINE_H_
