#include "analyzer/timeline/fill_timeline.h"

#include <algorithm>
#include <cmath>

namespace gs::analyzer {

void FillTimeline::Accumulate(TimeNs until) {
  if (until <= now_) return;
  const double dt = static_cast<double>(until - now_);
  // The sums are of non-negative fills: clamped, the drift of the subtractions never goes below 0.
  const double coverage = std::clamp(coverage_sum_, 0.0, 1.0), occupancy = std::clamp(occupancy_sum_, 0.0, 1.0);
  coverage_ns_ += dt * coverage;
  occupancy_ns_ += dt * occupancy;
  if (observer_ && !running_.empty()) observer_(FillPiece{now_, until, coverage, occupancy});
  now_ = until;
}

void FillTimeline::AdvanceTo(TimeNs t) {
  while (!running_.empty() && running_.top().end <= t) {
    const Running r = running_.top();
    Accumulate(r.end);  // while r still runs
    running_.pop();
    coverage_sum_ -= r.coverage;
    occupancy_sum_ -= r.occupancy;
  }
  if (running_.empty()) coverage_sum_ = occupancy_sum_ = 0;  // no drift from the subtractions
  Accumulate(t);
}

void FillTimeline::Add(TimeNs start, TimeNs end, double coverage, double occupancy) {
  if (end <= start) return;
  ++kernels_;
  if (!started_) now_ = start, started_ = true;
  start = std::max(start, now_);  // late: from the last start on
  if (end <= start) return;
  AdvanceTo(start);
  const Running r{end, std::clamp(coverage, 0.0, 1.0), occupancy < 0 ? 0.0 : std::min(occupancy, 1.0)};
  coverage_sum_ += r.coverage;
  occupancy_sum_ += r.occupancy;
  running_.push(r);
}

TimeNs FillTimeline::coverage_ns() {
  while (!running_.empty()) AdvanceTo(running_.top().end);
  return static_cast<TimeNs>(std::llround(coverage_ns_));
}

TimeNs FillTimeline::occupancy_ns() {
  while (!running_.empty()) AdvanceTo(running_.top().end);
  return static_cast<TimeNs>(std::llround(occupancy_ns_));
}

}  // namespace gs::analyzer
