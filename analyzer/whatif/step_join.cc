#include "analyzer/whatif/step_join.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "analyzer/model/median.h"
#include "analyzer/units/units.h"

namespace gs::analyzer::whatif {

void PredictStraggler(const std::vector<RankSummary>& summaries, RanksSection* section, double tolerance) {
  StragglerVerdict& v = section->straggler;
  if (!v.found) return;
  StragglerPrediction& p = v.prediction;
  p = StragglerPrediction();
  p.ran = true;
  p.tolerance = tolerance;
  const std::vector<const RankSummary*> ranks = RanksInRowOrder(summaries);
  const size_t steps = section->steps_compared;
  if (v.row >= ranks.size() || steps < 3) {
    p.reason = "the ranks have fewer than three collectives: no two steps to join";
    return;
  }
  std::vector<size_t> joined;  // the ranks with collectives (AnalyzeRanks compared those)
  for (size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i]->steps.size() >= steps) joined.push_back(i);
  const size_t s = v.row;

  TimeNs replayed = 0, predicted = 0;
  std::vector<TimeNs> busy_saved(ranks.size(), 0);
  std::vector<TimeNs> arrival(ranks.size()), arrival_fixed(ranks.size());
  for (size_t k = 1; k < steps; ++k) {
    TimeNs own = INT64_MAX;
    std::vector<TimeNs> host_bound;  // the other ranks'
    for (size_t i : joined) {
      const RankStep& now = ranks[i]->steps[k];
      own = std::min(own, now.collective_end_ns - now.collective_start_ns);
      if (i != s) host_bound.push_back(now.host_bound_idle_ns);
    }
    const TimeNs median_host_bound = Median(std::move(host_bound));
    TimeNs last = INT64_MIN, last_fixed = INT64_MIN;
    for (size_t i : joined) {
      const RankStep& now = ranks[i]->steps[k];
      arrival[i] = now.collective_start_ns - ranks[i]->steps[k - 1].collective_end_ns;
      arrival_fixed[i] = arrival[i];
      if (i == s) arrival_fixed[i] -= std::max<TimeNs>(0, now.host_bound_idle_ns - median_host_bound);
      last = std::max(last, arrival[i]);
      last_fixed = std::max(last_fixed, arrival_fixed[i]);
    }
    replayed += last + own;
    predicted += last_fixed + own;
    for (size_t i : joined) busy_saved[i] += (last - arrival[i]) - (last_fixed - arrival_fixed[i]);
  }
  p.steps = steps - 1;
  const auto per_step = [&p](TimeNs total) { return total / static_cast<TimeNs>(p.steps); };
  p.measured_step_ns = section->step_ns;  // AnalyzeRanks' measure of the same steps
  p.replayed_step_ns = per_step(replayed);
  // The fix's saving, taken off what was measured (as the run's below): the join's own miss,
  // within the tolerance, is not a prediction.
  p.predicted_step_ns = p.measured_step_ns - per_step(replayed - predicted);
  const double measured = static_cast<double>(p.measured_step_ns);
  p.step_error = measured > 0 ? (static_cast<double>(replayed) / static_cast<double>(p.steps) - measured) / measured : 0;
  if (measured <= 0 || std::fabs(p.step_error) > tolerance) {
    p.reason = measured <= 0 ? "the ranks' steps take no time"
                             : absl::StrCat("the ranks joined at their collectives replay a step to ",
                                            FormatDuration(p.replayed_step_ns), " against the measured ",
                                            FormatDuration(p.measured_step_ns),
                                            ": their steps do not follow the all-reduce's rule alone");
    return;
  }
  p.ok = true;
  p.measured_wall_ns = section->run_ns;
  // A rank's wall and busy time are summed over its devices (rank_summary.h): the saving is
  // every device's.
  const TimeNs saved = replayed - predicted;
  double busy = 0, busy_fixed = 0, capacity = 0, capacity_fixed = 0;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const RankSummary& r = *ranks[i];
    const TimeNs devices = std::max<TimeNs>(1, r.devices);
    const bool in_join = r.steps.size() >= steps;
    const TimeNs wall_fixed = r.wall_ns - (in_join ? saved * devices : 0);
    p.predicted_wall_ns = std::max(p.predicted_wall_ns, wall_fixed / devices);
    busy += static_cast<double>(r.compute_busy_ns);
    busy_fixed += static_cast<double>(r.compute_busy_ns - busy_saved[i]);
    capacity += static_cast<double>(r.wall_ns);
    capacity_fixed += static_cast<double>(wall_fixed);
  }
  p.measured_utilization = capacity > 0 ? busy / capacity : 0;
  p.predicted_utilization = capacity_fixed > 0 ? busy_fixed / capacity_fixed : 0;
}

}  // namespace gs::analyzer::whatif
