#include "analyzer/whatif/predictions.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/whatif/step_join.h"

namespace gs::analyzer::whatif {

namespace {

// A job's figures from one figure per trace: the longest run, compute busy over all walls, and
// the step: joined ranks' mean step between collectives, else the longest mean profiler step
// where every trace has one (0: none).
struct JobFigures {
  TimeNs wall_ns = 0;
  double utilization = 0;
  TimeNs step_ns = 0;
};

// How a job's traces are joined at their steps (step_join.h), as the ranks section paired them
// (RankRow::first_step): ranks that meet at their collectives, three or more steps compared, and
// every trace's replay holding the collectives its summary counted. Else `steps` is 0 and the
// traces are merged as they are.
struct StepPairing {
  size_t steps = 0;
  std::vector<size_t> first;      // per trace (TraceReplay::index)
  std::vector<TimeNs> offset;     // per trace: its clock offset (RankRow::clock_offset_ns)
  bool aligned = false;           // every trace's clock is aligned: the first collective joins too
  std::vector<TimeNs> own;        // each compared collective's own work, from the measured traces
};

// A trace's compared steps, as the pairing has them.
std::vector<StepTimes> Paired(const std::vector<StepTimes>& steps, const StepPairing& p, size_t trace) {
  return {steps.begin() + static_cast<std::ptrdiff_t>(p.first[trace]),
          steps.begin() + static_cast<std::ptrdiff_t>(p.first[trace] + p.steps)};
}

StepPairing PairSteps(const std::vector<TraceReplay>& replays, const RanksSection& ranks) {
  StepPairing p;
  if (replays.size() < 2 || ranks.steps_compared < 3) return p;
  p.first.assign(replays.size(), 0);
  p.offset.assign(replays.size(), 0);
  p.aligned = true;
  for (const TraceReplay& r : replays) {
    const auto row = std::find_if(ranks.rows.begin(), ranks.rows.end(),
                                  [&r](const RankRow& x) { return x.input == r.index; });
    if (row == ranks.rows.end() || row->steps == 0 || r.check.measured.steps.size() != row->steps ||
        r.index >= p.first.size())
      return StepPairing();
    p.first[r.index] = row->first_step;
    p.offset[r.index] = row->clock_offset_ns;
    p.aligned &= row->clock_aligned;
  }
  p.steps = ranks.steps_compared;
  std::vector<std::vector<StepTimes>> measured;
  for (const TraceReplay& r : replays) measured.push_back(Paired(r.check.measured.steps, p, r.index));
  std::vector<const std::vector<StepTimes>*> of_ranks;
  for (const std::vector<StepTimes>& m : measured) of_ranks.push_back(&m);
  p.own = OwnWork(of_ranks, p.steps);
  return p;
}

// With joined steps, each trace's steps are the joined ones: a rank that arrives sooner at its
// collectives shortens every rank's steps, and a rank that waits less in them is busy less.
template <typename PerTrace>
JobFigures Merge(const std::vector<TraceReplay>& replays, const StepPairing& pairing, PerTrace figures_of) {
  const size_t steps = pairing.steps;
  JoinedSteps joined;
  std::vector<std::vector<StepTimes>> paired;
  std::vector<TimeNs> offsets;
  if (steps > 0) {
    for (const TraceReplay& r : replays) {
      paired.push_back(Paired(figures_of(r).steps, pairing, r.index));
      offsets.push_back(pairing.offset[r.index]);
    }
    std::vector<const std::vector<StepTimes>*> ranks;
    for (const std::vector<StepTimes>& s : paired) ranks.push_back(&s);
    joined = JoinSteps(ranks, pairing.own, steps, pairing.aligned ? &offsets : nullptr);
  }
  JobFigures j;
  double busy = 0, capacity = 0;
  bool every_profiler_step = true;
  for (size_t i = 0; i < replays.size(); ++i) {
    const ReplayFigures& f = figures_of(replays[i]);
    const TimeNs wall = steps > 0 ? joined.Wall(paired[i], offsets[i], f.wall_ns) : f.wall_ns;
    j.wall_ns = std::max(j.wall_ns, wall);
    busy += static_cast<double>(steps > 0 ? joined.Busy(paired[i], offsets[i], f.compute_busy_ns) : f.compute_busy_ns);
    capacity += static_cast<double>(wall) * f.devices;
    j.step_ns = std::max(j.step_ns, f.profiler_step_ns);
    every_profiler_step &= f.profiler_step_ns > 0;
  }
  if (!every_profiler_step) j.step_ns = 0;
  if (steps > 1) j.step_ns = joined.total / static_cast<TimeNs>(steps - 1);
  j.utilization = capacity > 0 ? busy / capacity : 0;
  return j;
}

// The trace's figures with the fix `kind` (and `workers`), or its unmodified replay.
const ReplayFigures& WithFix(const TraceReplay& r, const std::string& kind, uint32_t workers = 0) {
  for (const WhatIf& w : r.what_ifs)
    if (w.kind == kind && w.workers == workers) return w.figures;
  return r.check.replayed;
}

bool AnyTraceHas(const std::vector<TraceReplay>& replays, const std::string& kind) {
  for (const TraceReplay& r : replays)
    for (const WhatIf& w : r.what_ifs)
      if (w.kind == kind) return true;
  return false;
}

}  // namespace

void AttachPredictions(const std::vector<TraceReplay>& replays, Analysis* a) {
  if (replays.empty()) return;
  ReplaySummary& s = a->replay;
  s.ran = true;
  s.ok = true;
  // Measured: the traces as they are; replayed and with each fix: joined where the ranks meet at
  // their collectives.
  const StepPairing pairing = PairSteps(replays, a->ranks);
  const JobFigures measured = Merge(replays, StepPairing(), [](const TraceReplay& r) -> const ReplayFigures& { return r.check.measured; });
  const JobFigures replayed = Merge(replays, pairing, [](const TraceReplay& r) -> const ReplayFigures& { return r.check.replayed; });
  s.measured_wall_ns = measured.wall_ns;
  s.replayed_wall_ns = replayed.wall_ns;
  s.measured_utilization = measured.utilization;
  s.replayed_utilization = replayed.utilization;
  // The measured step by the same measure as the replayed one: joined ranks' as the ranks
  // section measured it (the mean between collectives), else the profiler steps'.
  s.measured_step_ns = pairing.steps > 0 ? a->ranks.step_ns : measured.step_ns;
  s.replayed_step_ns = s.measured_step_ns > 0 ? replayed.step_ns : 0;
  if (pairing.steps > 0) {
    s.step_marks = "collectives";
  } else if (s.measured_step_ns > 0) {
    for (const TraceReplay& r : replays)
      if (s.step_marks.empty()) s.step_marks = r.step_marks;
  }
  s.joined_steps = pairing.steps > 0 ? pairing.steps - 1 : 0;  // between the first compared collective and the last
  for (const TraceReplay& r : replays) {
    s.tolerance = r.check.tolerance;
    if (std::fabs(r.check.wall_error) > std::fabs(s.wall_error)) s.wall_error = r.check.wall_error;
    if (std::fabs(r.check.busy_error) > std::fabs(s.busy_error)) s.busy_error = r.check.busy_error;
    if (!r.check.ok && s.ok) {
      s.ok = false;
      const std::string label = r.index < a->traces.size() ? a->traces[r.index].Label() : "";
      s.reason = label.empty() ? r.check.reason : absl::StrCat(label, ": ", r.check.reason);
    }
  }
  // Joined, the job's own check: the ranks' replays joined at their collectives against the
  // measured run (each trace's own check above holds its collectives' waits as measured).
  if (s.ok && s.joined_steps > 0 && s.measured_wall_ns > 0) {
    const double error = static_cast<double>(s.replayed_wall_ns - s.measured_wall_ns) / static_cast<double>(s.measured_wall_ns);
    if (std::fabs(error) > std::fabs(s.wall_error)) s.wall_error = error;
    if (std::fabs(error) > s.tolerance) {
      s.ok = false;
      s.reason = absl::StrFormat(
          "the ranks' replays joined at their collectives give a run %+.1f%% off the measured one: their steps "
          "do not follow the all-reduce's rule alone, or a trace lacks some of the job's collectives",
          100 * error);
    }
  }
  if (!s.ok) return;

  // Workers that compute need a core each (the training process keeps one); workers that wait
  // on storage or on something else do not.
  const uint32_t cores = a->input_workers.host.online_cores;
  const bool waiting = a->input_workers.verdict == WorkerVerdict::kStorageBound ||
                       a->input_workers.verdict == WorkerVerdict::kWaiting;
  const uint32_t most = kWorkerCounts[std::size(kWorkerCounts) - 1];
  const uint32_t max_workers = waiting ? most : cores > 1 ? cores - 1 : (cores == 1 ? 1 : 8);
  for (Recommendation& rec : a->recommendations) {
    Prediction& p = rec.prediction;
    if (rec.kind == "input_pipeline" || rec.kind == "input_workers") {
      if (!AnyTraceHas(replays, "input_pipeline")) continue;
      const JobFigures bound = Merge(replays, pairing, [](const TraceReplay& r) -> const ReplayFigures& {
        return WithFix(r, "input_pipeline");
      });
      JobFigures best;
      uint32_t best_n = 0;
      std::vector<std::pair<uint32_t, JobFigures>> by_n;
      for (uint32_t n : kWorkerCounts) {
        if (n > max_workers) break;
        bool any = false;  // the traces predicted n (more than their workers)
        for (const TraceReplay& r : replays)
          for (const WhatIf& w : r.what_ifs) any |= w.kind == "input_workers" && w.workers == n;
        if (!any) continue;
        by_n.push_back({n, Merge(replays, pairing, [n](const TraceReplay& r) -> const ReplayFigures& {
                          return WithFix(r, "input_workers", n);
                        })});
        if (best_n == 0 || by_n.back().second.wall_ns < best.wall_ns) {
          best = by_n.back().second;
          best_n = n;
        }
      }
      for (const auto& [n, f] : by_n) {
        if (static_cast<double>(f.wall_ns) <= 1.05 * static_cast<double>(best.wall_ns)) {
          p.workers = n;
          p.wall_ns = f.wall_ns;
          p.utilization = f.utilization;
          p.step_ns = s.measured_step_ns > 0 ? f.step_ns : 0;
          break;
        }
      }
      p.bound_wall_ns = bound.wall_ns;
      p.bound_utilization = bound.utilization;
      for (const TraceReplay& r : replays)
        for (const WhatIf& w : r.what_ifs) p.producers_unseen |= w.kind == "input_pipeline" && w.producers_unseen;
      if (p.workers == 0) {  // no more workers fit the host: cheaper batches, the bound
        p.wall_ns = bound.wall_ns;
        p.utilization = bound.utilization;
        p.step_ns = s.measured_step_ns > 0 ? bound.step_ns : 0;
      }
      p.present = true;
      continue;
    }
    if (!AnyTraceHas(replays, rec.kind)) continue;
    const std::string kind = rec.kind;
    const JobFigures f = Merge(replays, pairing, [&kind](const TraceReplay& r) -> const ReplayFigures& { return WithFix(r, kind); });
    p.present = true;
    p.wall_ns = f.wall_ns;
    p.utilization = f.utilization;
    p.step_ns = s.measured_step_ns > 0 ? f.step_ns : 0;
  }
  // Ranked by the run time they save; those without a prediction keep their order after them.
  std::stable_sort(a->recommendations.begin(), a->recommendations.end(),
                   [](const Recommendation& x, const Recommendation& y) {
                     if (x.prediction.present != y.prediction.present) return x.prediction.present;
                     return x.prediction.present && x.prediction.wall_ns < y.prediction.wall_ns;
                   });
}

}  // namespace gs::analyzer::whatif
