// fill_timeline.h — how full one device was while its kernels ran, beside how often they ran.
//
// DeviceTimeline counts a device busy while any kernel runs (nvidia-smi's GPU-Util). This one
// integrates, over the same kernels, the share of the device they fill: at each instant the sum of
// the running kernels' fills (a kernel's SM coverage, or its estimated occupancy), capped at 1 —
// DCGM's SM_ACTIVE model of concurrent kernels (analyzer/occupancy/occupancy.h has the per-kernel
// figures). A device with one 1-block kernel running all the time is busy 100% and covered 1/N.
//
// Feed kernels in non-decreasing start order (the analysis's sort window does that); a kernel that
// starts before the last one added (late, past the window) counts from that start on.
//
// Pieces: with an observer set, every stretch of time in which at least one kernel ran and the
// sums did not change is handed to it as it is integrated, in time order, once the timeline has
// moved past it (the next kernel's start, or coverage_ns()/occupancy_ns() for the last ones). They
// are what the integrals sum, so views that draw the fill over time (the HTML timeline's
// under-filled shade, the Chrome export's counter track) add up to the analysis's own figures.
// Memory: the kernels running at once.
//
// Thread safety: none.
#ifndef GPUSTALL_ANALYZER_TIMELINE_FILL_TIMELINE_H_
#define GPUSTALL_ANALYZER_TIMELINE_FILL_TIMELINE_H_

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "analyzer/model/types.h"

namespace gs::analyzer {

// [start, end) in which the same kernels ran: min(1, Σ coverage) and min(1, Σ occupancy) over it.
struct FillPiece {
  TimeNs start = 0, end = 0;
  double coverage = 0, occupancy = 0;
};

class FillTimeline {
 public:
  using PieceObserver = std::function<void(const FillPiece& piece)>;
  // Set before the first Add.
  void set_piece_observer(PieceObserver observer) { observer_ = std::move(observer); }

  // Fills in [0, 1] each: `coverage` the kernel's (wave-aware) SM coverage, `occupancy` its
  // estimated occupancy (< 0: unknown, counted as its coverage would not be: 0).
  void Add(TimeNs start, TimeNs end, double coverage, double occupancy);
  // ∫ min(1, Σ coverage) dt and ∫ min(1, Σ occupancy) dt so far, in ns (all kernels ended).
  TimeNs coverage_ns();
  TimeNs occupancy_ns();
  uint64_t kernels() const { return kernels_; }

 private:
  struct Running {
    TimeNs end;
    double coverage, occupancy;
    bool operator>(const Running& o) const { return end > o.end; }
  };
  // Integrates up to `t`, retiring the kernels that end before it.
  void AdvanceTo(TimeNs t);
  // Integrates [now_, until) at the current sums (the running kernels').
  void Accumulate(TimeNs until);

  std::priority_queue<Running, std::vector<Running>, std::greater<Running>> running_;
  TimeNs now_ = 0;
  bool started_ = false;
  double coverage_sum_ = 0, occupancy_sum_ = 0;
  double coverage_ns_ = 0, occupancy_ns_ = 0;
  uint64_t kernels_ = 0;
  PieceObserver observer_;
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_TIMELINE_FILL_TIMELINE_H_
