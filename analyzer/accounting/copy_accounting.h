// copy_accounting.h — copies by direction: bytes, device time, pageable vs pinned, and the host
// time pageable copies cost; turned into a CopySummary with the estimated gain from pinning.
//
// The gain model (documented in JSON.md):
//   - the host time of pageable copy calls is measured: the call's duration minus the part of it
//     spent waiting for earlier work on the device; when the trace has no API calls, the copies'
//     device time stands in for it;
//   - staging cost = host time of pageable copies - device time of those copies (what the host
//     paid beyond the transfer itself, i.e. the copy through the driver's pinned staging buffer);
//   - pinned bandwidth: measured from this trace's pinned copies in the same direction when they
//     moved at least 1 MiB; else the link's peak when the trace reports PCIe generation and
//     width; else modelled as 2x the pageable copies' effective bandwidth (staging copies each
//     byte twice, once by the CPU and once by DMA, at comparable speed on common hosts);
//   - estimated gain = host time of pageable copies - pageable bytes / pinned bandwidth (>= 0).
//
// Thread safety: none.
#ifndef GPUSTALL_ANALYZER_ACCOUNTING_COPY_ACCOUNTING_H_
#define GPUSTALL_ANALYZER_ACCOUNTING_COPY_ACCOUNTING_H_

#include <array>
#include <string>
#include <vector>

#include "analyzer/model/types.h"

namespace gs::analyzer {

// The model's ratio of pinned to pageable bandwidth where nothing better is known (above).
inline constexpr double kPinnedOverPageable = 2.0;

struct CopyStats {
  CopyDirection direction = CopyDirection::kUnknown;
  uint64_t count = 0;
  uint64_t bytes = 0;
  TimeNs time_ns = 0;             // device time of the copies
  double bandwidth = 0;           // bytes/s achieved (bytes / time)
  uint64_t pageable_bytes = 0;
  TimeNs pageable_time_ns = 0;
  uint64_t pinned_bytes = 0;
  TimeNs pinned_time_ns = 0;
  TimeNs pageable_call_ns = 0;    // host time inside pageable copy calls (staging included)
};

struct CopySummary {
  std::vector<CopyStats> directions;   // only directions with copies
  uint64_t bytes = 0;
  uint64_t pageable_bytes = 0;
  double pageable_share = 0;           // of copied bytes
  TimeNs pageable_staging_ns = 0;      // estimated time pageable staging cost
  TimeNs est_pinning_gain_ns = 0;      // estimated time saved by pinning
  std::string gain_model;              // how the estimate was made
  double link_peak_bandwidth = 0;      // bytes/s from PCIe generation/width; 0 unknown
};

class CopyAccounting {
 public:
  void AddActivity(const GpuActivity& a);   // memcpy activities only
  // Host time a pageable copy call cost, without the time it waited for earlier device work
  // (a blocking D2H copy first waits for the kernels before it): the caller computes it from the
  // call and the device's busy frontier when the copy's activity is processed.
  void AddPageableCallTime(CopyDirection direction, TimeNs ns);
  void Merge(const CopyAccounting& o);
  // `link_peak` in bytes/s, 0 when unknown.
  CopySummary Summarize(double link_peak) const;
  // What a direction's copies would move at from pinned memory, bytes/s, as far as the trace
  // says: its own pinned copies (at least 1 MiB of them), else `link_peak`; 0 when neither.
  double KnownPinnedBandwidth(CopyDirection direction, double link_peak) const;

 private:
  std::array<CopyStats, kNumCopyDirections> by_dir_{};
};

// PCIe peak per direction in bytes/s for a generation (1..6) and lane count; 0 when unknown.
double PcieLinkPeak(uint32_t generation, uint32_t width);

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_ACCOUNTING_COPY_ACCOUNTING_H_
