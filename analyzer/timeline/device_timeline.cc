#include "analyzer/timeline/device_timeline.h"

#include <algorithm>

namespace gs::analyzer {

namespace {
// Floor division that is right for negative times too.
int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
}  // namespace

DeviceTimeline::Gap DeviceTimeline::Add(const GpuActivity& a) {
  Gap gap;
  TimeNs prev_frontier = busy_.frontier();
  TimeNs len = busy_.Add(a.start_ns, a.end_ns);
  if (len > 0) gap = Gap{prev_frontier, a.start_ns};
  if (IsCompute(a.kind)) {
    ++kernels_;
    compute_.Add(a.start_ns, a.end_ns, [this](TimeNs x, TimeNs y) { AddComputeTime(x, y); });
  } else {
    if (a.kind == ActivityKind::kMemset) ++memsets_; else ++copies_;
    copy_.Add(a.start_ns, a.end_ns);
  }
  return gap;
}

void DeviceTimeline::AddComputeTime(TimeNs a, TimeNs b) {
  int64_t first = FloorDiv(a, period_);
  int64_t last = FloorDiv(b - 1, period_);
  if (bins_.empty()) base_bin_ = first;
  if (first < base_bin_) {  // only for late records (input is sorted by start otherwise)
    bins_.insert(bins_.begin(), static_cast<size_t>(base_bin_ - first), 0);
    base_bin_ = first;
  }
  if (static_cast<int64_t>(bins_.size()) < last - base_bin_ + 1) bins_.resize(last - base_bin_ + 1, 0);
  if (first == last) {  // the common case: a kernel shorter than the sample period
    bins_[first - base_bin_] += b - a;
    return;
  }
  for (int64_t bin = first; bin <= last; ++bin) {
    TimeNs lo = std::max(a, bin * period_);
    TimeNs hi = std::min(b, (bin + 1) * period_);
    bins_[bin - base_bin_] += hi - lo;
  }
}

std::vector<double> DeviceTimeline::UtilizationSamples(TimeNs from, TimeNs to) const {
  std::vector<double> out;
  if (to <= from) return out;
  // Samples are aligned to `from`, bins to absolute time: spread each bin's busy time over the
  // samples it overlaps in proportion (a bin's busy time is treated as uniform inside it).
  size_t n = static_cast<size_t>((to - from + period_ - 1) / period_);
  std::vector<double> busy(n, 0.0);
  for (size_t i = 0; i < bins_.size(); ++i) {
    if (bins_[i] == 0) continue;
    TimeNs b0 = (base_bin_ + static_cast<int64_t>(i)) * period_, b1 = b0 + period_;
    TimeNs lo = std::max(b0, from), hi = std::min(b1, to);
    if (hi <= lo) continue;
    for (TimeNs s = lo; s < hi;) {
      size_t idx = static_cast<size_t>((s - from) / period_);
      TimeNs s_end = std::min(hi, from + static_cast<TimeNs>(idx + 1) * period_);
      busy[idx] += static_cast<double>(bins_[i]) * (s_end - s) / period_;
      s = s_end;
    }
  }
  out.resize(n);
  for (size_t i = 0; i < n; ++i) {
    TimeNs len = std::min<TimeNs>(period_, to - (from + static_cast<TimeNs>(i) * period_));
    out[i] = std::clamp(busy[i] / static_cast<double>(len), 0.0, 1.0);
  }
  return out;
}

}  // namespace gs::analyzer
