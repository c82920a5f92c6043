#include "analyzer/whatif/step_join.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/model/median.h"
#include "analyzer/units/units.h"

namespace gs::analyzer::whatif {

std::vector<TimeNs> OwnWork(const std::vector<const std::vector<StepTimes>*>& ranks, size_t steps) {
  std::vector<TimeNs> own(steps, INT64_MAX);
  for (const std::vector<StepTimes>* r : ranks)
    for (size_t k = 0; k < steps; ++k) own[k] = std::min(own[k], (*r)[k].end - (*r)[k].start);
  return own;
}

JoinedSteps JoinSteps(const std::vector<const std::vector<StepTimes>*>& ranks, const std::vector<TimeNs>& own,
                      size_t steps, const std::vector<TimeNs>* offsets) {
  JoinedSteps j;
  if (offsets != nullptr && !ranks.empty() && steps > 0) {
    j.first_joined = true;
    TimeNs last = INT64_MIN;
    for (size_t r = 0; r < ranks.size(); ++r) last = std::max(last, (*ranks[r])[0].start + (*offsets)[r]);
    j.first_end = last + own[0];
  }
  for (size_t k = 1; k < steps; ++k) {
    TimeNs last = INT64_MIN;
    for (const std::vector<StepTimes>* r : ranks) last = std::max(last, (*r)[k].start - (*r)[k - 1].end);
    j.step.push_back(last + own[k]);
    j.total += j.step.back();
  }
  return j;
}

TimeNs JoinedSteps::InCollective(const std::vector<StepTimes>& r, TimeNs offset, size_t k) const {
  if (k == 0) return FirstEnd(r, offset) - r[0].start;
  return step[k - 1] - (r[k].start - r[k - 1].end);
}

TimeNs JoinedSteps::Wall(const std::vector<StepTimes>& r, TimeNs offset, TimeNs wall) const {
  return wall - (r[step.size()].end - FirstEnd(r, offset)) + total;
}

TimeNs JoinedSteps::Busy(const std::vector<StepTimes>& r, TimeNs offset, TimeNs busy) const {
  for (size_t k = 0; k <= step.size(); ++k) busy += InCollective(r, offset, k) - (r[k].end - r[k].start);
  return busy;
}

void PredictStraggler(const std::vector<RankSummary>& summaries, RanksSection* section, double tolerance) {
  StragglerVerdict& v = section->straggler;
  if (!v.found) return;
  StragglerPrediction& p = v.prediction;
  p = StragglerPrediction();
  p.ran = true;
  p.tolerance = tolerance;
  const std::vector<const RankSummary*> ranks = RanksInRowOrder(summaries);
  const size_t steps = section->steps_compared;
  if (v.row >= ranks.size() || steps < 3 || section->rows.size() != ranks.size()) {
    p.reason = "the ranks have fewer than three collectives: no two steps to join";
    return;
  }
  // The ranks with collectives (AnalyzeRanks compared those), their steps as measured, and the
  // straggler's with its host-bound idle beyond the other ranks' median gone: it starts each
  // collective that much sooner after the previous one ended.
  std::vector<size_t> joined;
  std::vector<std::vector<StepTimes>> measured, fixed;
  auto step_of = [&](size_t i, size_t k) -> const RankStep& { return ComparedStep(*ranks[i], section->rows[i], k); };
  std::vector<TimeNs> offsets;
  bool aligned = true;  // every clock maps onto the reference's: the first collective joins too
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i]->steps.empty()) continue;
    joined.push_back(i);
    offsets.push_back(section->rows[i].clock_offset_ns);
    aligned &= section->rows[i].clock_aligned;
    measured.emplace_back();
    for (size_t k = 0; k < steps; ++k) measured.back().push_back({step_of(i, k).collective_start_ns, step_of(i, k).collective_end_ns});
  }
  fixed = measured;
  for (size_t k = aligned ? 0 : 1; k < steps; ++k) {
    std::vector<TimeNs> others;
    TimeNs mine = 0;
    size_t at = 0;
    for (size_t j = 0; j < joined.size(); ++j) {
      const TimeNs host_bound = step_of(joined[j], k).host_bound_idle_ns;
      if (joined[j] == v.row) {
        mine = host_bound;
        at = j;
      } else {
        others.push_back(host_bound);
      }
    }
    fixed[at][k].start -= std::max<TimeNs>(0, mine - Median(std::move(others)));
  }
  std::vector<const std::vector<StepTimes>*> measured_ranks, fixed_ranks;
  for (size_t j = 0; j < joined.size(); ++j) {
    measured_ranks.push_back(&measured[j]);
    fixed_ranks.push_back(&fixed[j]);
  }
  const std::vector<TimeNs> own = OwnWork(measured_ranks, steps);
  const JoinedSteps replayed = JoinSteps(measured_ranks, own, steps, aligned ? &offsets : nullptr);
  const JoinedSteps predicted = JoinSteps(fixed_ranks, own, steps, aligned ? &offsets : nullptr);

  p.steps = steps - 1;
  const auto per_step = [&p](TimeNs total) { return total / static_cast<TimeNs>(p.steps); };
  p.measured_step_ns = section->step_ns;  // AnalyzeRanks' measure of the same steps
  p.replayed_step_ns = per_step(replayed.total);
  // The fix's saving, taken off what was measured (as the run's below): the join's own miss,
  // within the tolerance, is not a prediction.
  p.predicted_step_ns = p.measured_step_ns - per_step(replayed.total - predicted.total);
  // The check: the joined steps against each rank's own (the worst), so that a rank whose
  // steps the join does not reproduce (collectives that do not hold it, collectives missing from
  // its trace) stops the prediction.
  bool some_time = false;
  for (const std::vector<StepTimes>& r : measured) {
    const TimeNs span = r[steps - 1].end - r[0].end;
    if (span <= 0) continue;
    some_time = true;
    const double error = static_cast<double>(replayed.total - span) / static_cast<double>(span);
    if (std::fabs(error) > std::fabs(p.step_error)) p.step_error = error;
  }
  if (!some_time || std::fabs(p.step_error) > tolerance) {
    p.reason = !some_time ? "the ranks' steps take no time"
                          : absl::StrFormat("the ranks joined at their collectives replay their steps %+.1f%% off a "
                                            "rank's own: its steps do not follow the all-reduce's rule alone, or its trace lacks some "
                                            "of the job's collectives",
                                            100 * p.step_error);
    return;
  }
  p.ok = true;
  p.measured_wall_ns = section->run_ns;
  // A rank's wall and busy time are summed over its devices (rank_summary.h): the saving is
  // every device's; the change in its collectives' waiting is its step device's.
  const TimeNs saved = (replayed.first_end - predicted.first_end) + (replayed.total - predicted.total);
  double busy = 0, busy_fixed = 0, capacity = 0, capacity_fixed = 0;
  size_t j = 0;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const RankSummary& r = *ranks[i];
    const TimeNs devices = std::max<TimeNs>(1, r.devices);
    TimeNs wall_fixed = r.wall_ns, busy_of_rank = r.compute_busy_ns;
    if (j < joined.size() && joined[j] == i) {
      wall_fixed -= saved * devices;
      // Its time in the collectives of the fixed join against the unmodified join's.
      for (size_t k = 0; k < steps; ++k)
        busy_of_rank += predicted.InCollective(fixed[j], offsets[j], k) - replayed.InCollective(measured[j], offsets[j], k);
      ++j;
    }
    p.predicted_wall_ns = std::max(p.predicted_wall_ns, wall_fixed / devices);
    busy += static_cast<double>(r.compute_busy_ns);
    busy_fixed += static_cast<double>(busy_of_rank);
    capacity += static_cast<double>(r.wall_ns);
    capacity_fixed += static_cast<double>(wall_fixed);
  }
  p.measured_utilization = capacity > 0 ? busy / capacity : 0;
  p.predicted_utilization = capacity_fixed > 0 ? busy_fixed / capacity_fixed : 0;
}

}  // namespace gs::analyzer::whatif
