#include "analyzer/whatif/predictions.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"

namespace gs::analyzer::whatif {

namespace {

// A job's figures from one figure per trace: the longest run, compute busy over all walls.
struct JobFigures {
  TimeNs wall_ns = 0;
  double utilization = 0;
};

template <typename PerTrace>
JobFigures Merge(const std::vector<TraceReplay>& replays, PerTrace figures_of) {
  JobFigures j;
  double busy = 0, capacity = 0;
  for (const TraceReplay& r : replays) {
    const ReplayFigures& f = figures_of(r);
    j.wall_ns = std::max(j.wall_ns, f.wall_ns);
    busy += static_cast<double>(f.compute_busy_ns);
    capacity += static_cast<double>(f.wall_ns) * f.devices;
  }
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
  const JobFigures measured = Merge(replays, [](const TraceReplay& r) -> const ReplayFigures& { return r.check.measured; });
  const JobFigures replayed = Merge(replays, [](const TraceReplay& r) -> const ReplayFigures& { return r.check.replayed; });
  s.measured_wall_ns = measured.wall_ns;
  s.replayed_wall_ns = replayed.wall_ns;
  s.measured_utilization = measured.utilization;
  s.replayed_utilization = replayed.utilization;
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
      const JobFigures bound = Merge(replays, [](const TraceReplay& r) -> const ReplayFigures& {
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
        by_n.push_back({n, Merge(replays, [n](const TraceReplay& r) -> const ReplayFigures& {
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
          break;
        }
      }
      p.bound_wall_ns = bound.wall_ns;
      p.bound_utilization = bound.utilization;
      if (p.workers == 0) {  // no more workers fit the host: cheaper batches, the bound
        p.wall_ns = bound.wall_ns;
        p.utilization = bound.utilization;
      }
      p.present = true;
      continue;
    }
    if (!AnyTraceHas(replays, rec.kind)) continue;
    const std::string kind = rec.kind;
    const JobFigures f = Merge(replays, [&kind](const TraceReplay& r) -> const ReplayFigures& { return WithFix(r, kind); });
    p.present = true;
    p.wall_ns = f.wall_ns;
    p.utilization = f.utilization;
  }
  // Ranked by the run time they save; those without a prediction keep their order after them.
  std::stable_sort(a->recommendations.begin(), a->recommendations.end(),
                   [](const Recommendation& x, const Recommendation& y) {
                     if (x.prediction.present != y.prediction.present) return x.prediction.present;
                     return x.prediction.present && x.prediction.wall_ns < y.prediction.wall_ns;
                   });
}

}  // namespace gs::analyzer::whatif
