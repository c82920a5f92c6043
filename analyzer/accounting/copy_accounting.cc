#include "analyzer/accounting/copy_accounting.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gs::analyzer {

namespace {
MemKind HostSide(CopyDirection d, MemKind src, MemKind dst) {
  if (d == CopyDirection::kHostToDevice) return src;
  if (d == CopyDirection::kDeviceToHost) return dst;
  return MemKind::kUnknown;
}
constexpr uint64_t kMinPinnedSample = 1 << 20;
}  // namespace

double PcieLinkPeak(uint32_t generation, uint32_t width) {
  // Usable bytes/s per lane after line coding: 2.5/5 GT/s with 8b/10b, then 128b/130b.
  static constexpr double kPerLane[] = {0, 0.25e9, 0.5e9, 0.985e9, 1.969e9, 3.938e9, 7.563e9};
  if (generation == 0 || generation > 6 || width == 0) return 0;
  return kPerLane[generation] * width;
}

void CopyAccounting::AddActivity(const GpuActivity& a) {
  CopyStats& s = by_dir_[static_cast<int>(a.direction)];
  TimeNs t = std::max<TimeNs>(0, a.end_ns - a.start_ns);
  ++s.count;
  s.bytes += a.bytes;
  s.time_ns += t;
  switch (HostSide(a.direction, a.src_kind, a.dst_kind)) {
    case MemKind::kPageable:
      s.pageable_bytes += a.bytes;
      s.pageable_time_ns += t;
      break;
    case MemKind::kPinned:
      s.pinned_bytes += a.bytes;
      s.pinned_time_ns += t;
      break;
    default:
      break;
  }
}

void CopyAccounting::AddPageableCallTime(CopyDirection direction, TimeNs ns) {
  by_dir_[static_cast<int>(direction)].pageable_call_ns += std::max<TimeNs>(0, ns);
}

void CopyAccounting::Merge(const CopyAccounting& o) {
  for (int i = 0; i < kNumCopyDirections; ++i) {
    CopyStats& s = by_dir_[i];
    const CopyStats& t = o.by_dir_[i];
    s.count += t.count;
    s.bytes += t.bytes;
    s.time_ns += t.time_ns;
    s.pageable_bytes += t.pageable_bytes;
    s.pageable_time_ns += t.pageable_time_ns;
    s.pinned_bytes += t.pinned_bytes;
    s.pinned_time_ns += t.pinned_time_ns;
    s.pageable_call_ns += t.pageable_call_ns;
  }
}

double CopyAccounting::KnownPinnedBandwidth(CopyDirection direction, double link_peak) const {
  const CopyStats& s = by_dir_[static_cast<int>(direction)];
  if (s.pinned_bytes >= kMinPinnedSample && s.pinned_time_ns > 0) return s.pinned_bytes * 1e9 / s.pinned_time_ns;
  return link_peak;
}

CopySummary CopyAccounting::Summarize(double link_peak) const {
  CopySummary sum;
  sum.link_peak_bandwidth = link_peak;
  std::vector<std::string> models;
  for (int i = 0; i < kNumCopyDirections; ++i) {
    CopyStats s = by_dir_[i];
    if (s.count == 0 && s.pageable_call_ns == 0) continue;
    s.direction = static_cast<CopyDirection>(i);
    s.bandwidth = s.time_ns > 0 ? s.bytes * 1e9 / s.time_ns : 0;
    sum.bytes += s.bytes;
    sum.pageable_bytes += s.pageable_bytes;
    if (s.pageable_bytes > 0) {
      TimeNs host = s.pageable_call_ns > 0 ? s.pageable_call_ns : s.pageable_time_ns;
      sum.pageable_staging_ns += std::max<TimeNs>(0, host - s.pageable_time_ns);
      double pinned_bw = 0;
      std::string model;
      if (s.pinned_bytes >= kMinPinnedSample && s.pinned_time_ns > 0) {
        pinned_bw = KnownPinnedBandwidth(s.direction, link_peak);
        model = absl::StrFormat("%s: measured pinned bandwidth %.2f GB/s", CopyDirectionName(s.direction), pinned_bw / 1e9);
      } else if (link_peak > 0) {
        pinned_bw = KnownPinnedBandwidth(s.direction, link_peak);
        model = absl::StrFormat("%s: link peak %.2f GB/s (no pinned copies measured)", CopyDirectionName(s.direction), pinned_bw / 1e9);
      } else if (host > 0) {
        pinned_bw = kPinnedOverPageable * s.pageable_bytes * 1e9 / host;
        model = absl::StrFormat("%s: model, pinned = 2x pageable effective bandwidth (%.2f GB/s)",
                                CopyDirectionName(s.direction), pinned_bw / 1e9);
      }
      if (pinned_bw > 0) {
        TimeNs pinned_time = static_cast<TimeNs>(s.pageable_bytes * 1e9 / pinned_bw);
        TimeNs gain = std::max<TimeNs>(0, host - pinned_time);
        sum.est_pinning_gain_ns += gain;
        // Name the model only where it matters (a few bytes of .item() copies need no model).
        if (gain > 0 && s.pageable_bytes >= kMinPinnedSample) models.push_back(model);
      }
    }
    sum.directions.push_back(s);
  }
  sum.pageable_share = sum.bytes ? static_cast<double>(sum.pageable_bytes) / sum.bytes : 0;
  for (size_t i = 0; i < models.size(); ++i) absl::StrAppend(&sum.gain_model, i ? "; " : "", models[i]);
  return sum;
}

}  // namespace gs::analyzer
