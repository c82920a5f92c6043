// trace_diff.h — `gsanalyze diff BEFORE AFTER`: what changed between two analyses (an
// optimisation's before/after): utilisation, idle by cause, and the stacks whose idle grew or
// shrank most.
//
// Stacks are matched by their frames' function names (root to leaf), not by ids, which differ
// between traces; file/line changes of an edited function do not break the match.
// Plain data plus two renderings; computes from finished Analyses only.
#ifndef GPUSTALL_ANALYZER_EXPORT_TRACE_DIFF_H_
#define GPUSTALL_ANALYZER_EXPORT_TRACE_DIFF_H_

#include <string>
#include <vector>

#include "analyzer/result/analysis.h"

namespace gs::analyzer {

struct CauseDelta {
  Cause cause = Cause::kOther;
  TimeNs before_ns = 0, after_ns = 0;
  double before_share = 0, after_share = 0;  // of each side's steady-state idle
  TimeNs delta_ns() const { return after_ns - before_ns; }
};

struct StackDelta {
  std::vector<std::string> functions;  // root first
  TimeNs before_ns = 0, after_ns = 0;
  Cause cause = Cause::kOther;         // largest cause on the side where it is larger
  TimeNs delta_ns() const { return after_ns - before_ns; }
};

// A prediction the BEFORE side's replay made (report --what-if), against the AFTER side as
// measured by the same measure (the replay's: first record to last, compute busy / wall; the
// straggler's: below).
struct PredictionCheck {
  std::string kind;                    // the recommendation kind
  uint32_t workers = 0;                // input workers predicted (input_pipeline, input_workers)
  TimeNs before_wall_ns = 0, predicted_wall_ns = 0, after_wall_ns = 0;
  double before_utilization = 0, predicted_utilization = 0, after_utilization = 0;
  // The job's mean step where both sides have steps (ReplaySummary::measured_step_ns; for
  // "straggler", the ranks joined at their collectives, the ranks section's measure on both
  // sides, RanksSection::step_ns, and its run is the longest rank's); else 0.
  TimeNs before_step_ns = 0, predicted_step_ns = 0, after_step_ns = 0;
  bool still_recommended = false;      // the AFTER side recommends it too (not the change made);
                                       // straggler: the after side names one
  double wall_error() const {          // (predicted - measured) / measured
    return after_wall_ns > 0 ? static_cast<double>(predicted_wall_ns - after_wall_ns) / after_wall_ns : 0;
  }
  double step_error() const {
    return after_step_ns > 0 ? static_cast<double>(predicted_step_ns - after_step_ns) / after_step_ns : 0;
  }
};

struct TraceDiff {
  double before_utilization = 0, after_utilization = 0;          // compute busy / wall
  double before_steady_utilization = 0, after_steady_utilization = 0;
  // How full the kernels kept the devices (Analysis::SmCoverageUtilization); -1: not known.
  double before_sm_coverage = -1, after_sm_coverage = -1;
  TimeNs before_wall_ns = 0, after_wall_ns = 0;                  // summed over devices
  TimeNs before_idle_ns = 0, after_idle_ns = 0;                  // steady-state idle
  std::vector<CauseDelta> causes;      // every cause, report order
  std::vector<StackDelta> grew;        // delta > 0, largest first
  std::vector<StackDelta> shrank;      // delta < 0, most negative first
  // diff --what-if: each prediction of the BEFORE side, in its report's order; empty without it or
  // when the BEFORE side's replay check failed (replay_ok false, replay_reason why).
  bool what_if = false, replay_ok = false;
  std::string replay_reason;
  std::vector<PredictionCheck> predictions;
};

// `before` and `after` should be built with AllStacksOptions() (collapsed_stacks.h) so that no
// stack is missing on one side because of the top-N cut. Keeps `top` stacks per list.
TraceDiff DiffAnalyses(const Analysis& before, const Analysis& after, size_t top = 10);

std::string RenderDiffText(const TraceDiff& diff);
std::string RenderDiffJson(const TraceDiff& diff);  // documented in analyzer/README.md

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_EXPORT_TRACE_DIFF_H_
