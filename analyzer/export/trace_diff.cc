#include "analyzer/export/trace_diff.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analyzer/units/units.h"
#include "analyzer/json/json_value.h"

namespace gs::analyzer {

namespace {

struct Side {
  TimeNs ns = 0;
  CauseNs by_cause{};
};

std::vector<std::string> FunctionsRootFirst(const std::vector<FrameInfo>& frames) {
  std::vector<std::string> out;
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) out.push_back(it->function);
  return out;
}

Cause Largest(const CauseNs& c) {
  int best = 0;
  for (int i = 1; i < kNumCauses; ++i)
    if (c[i] > c[best]) best = i;
  return static_cast<Cause>(best);
}

std::string SignedDuration(TimeNs ns) { return absl::StrCat(ns < 0 ? "-" : "+", FormatDuration(ns < 0 ? -ns : ns)); }
std::string SignedPoints(double fraction) { return absl::StrFormat("%+.1f pp", fraction * 100); }

TimeNs Wall(const Analysis& a) {
  TimeNs w = 0;
  for (const DeviceSummary& d : a.devices) w += d.wall_ns;
  return w;
}

}  // namespace

TraceDiff DiffAnalyses(const Analysis& before, const Analysis& after, size_t top) {
  TraceDiff d;
  d.before_utilization = before.Utilization();
  d.after_utilization = after.Utilization();
  d.before_steady_utilization = before.SteadyUtilization();
  d.after_steady_utilization = after.SteadyUtilization();
  d.before_sm_coverage = before.SmCoverageUtilization();
  d.after_sm_coverage = after.SmCoverageUtilization();
  d.before_wall_ns = Wall(before);
  d.after_wall_ns = Wall(after);
  d.before_idle_ns = before.steady_idle_ns;
  d.after_idle_ns = after.steady_idle_ns;
  for (int i = 0; i < kNumCauses; ++i) {
    CauseDelta c;
    c.cause = static_cast<Cause>(i);
    for (const CauseShare& s : before.causes)
      if (s.cause == c.cause) c.before_ns = s.idle_ns, c.before_share = s.share;
    for (const CauseShare& s : after.causes)
      if (s.cause == c.cause) c.after_ns = s.idle_ns, c.after_share = s.share;
    d.causes.push_back(c);
  }
  // Stacks keyed by function names; several stacks of one side may share a key (same functions,
  // other lines): they are summed.
  std::map<std::vector<std::string>, std::pair<Side, Side>> stacks;
  for (const StackShare& s : before.top_stacks) {
    Side& side = stacks[FunctionsRootFirst(s.frames)].first;
    side.ns += s.idle_ns;
    for (int i = 0; i < kNumCauses; ++i) side.by_cause[i] += s.by_cause[i];
  }
  for (const StackShare& s : after.top_stacks) {
    Side& side = stacks[FunctionsRootFirst(s.frames)].second;
    side.ns += s.idle_ns;
    for (int i = 0; i < kNumCauses; ++i) side.by_cause[i] += s.by_cause[i];
  }
  for (const auto& [key, sides] : stacks) {
    StackDelta s;
    s.functions = key;
    s.before_ns = sides.first.ns;
    s.after_ns = sides.second.ns;
    s.cause = Largest(s.after_ns >= s.before_ns ? sides.second.by_cause : sides.first.by_cause);
    if (s.delta_ns() > 0) d.grew.push_back(s);
    if (s.delta_ns() < 0) d.shrank.push_back(s);
  }
  std::stable_sort(d.grew.begin(), d.grew.end(), [](const StackDelta& x, const StackDelta& y) { return x.delta_ns() > y.delta_ns(); });
  std::stable_sort(d.shrank.begin(), d.shrank.end(), [](const StackDelta& x, const StackDelta& y) { return x.delta_ns() < y.delta_ns(); });
  if (d.grew.size() > top) d.grew.resize(top);
  if (d.shrank.size() > top) d.shrank.resize(top);
  if (before.replay.ran && after.replay.ran) {
    d.what_if = true;
    d.replay_ok = before.replay.ok;
    d.replay_reason = before.replay.reason;
    for (const Recommendation& r : before.recommendations) {
      if (!r.prediction.present) continue;
      PredictionCheck p;
      p.kind = r.kind;
      p.workers = r.prediction.workers;  // 0 for the input kinds: the bound (no more workers fit)
      p.before_wall_ns = before.replay.measured_wall_ns;
      p.predicted_wall_ns = r.prediction.wall_ns;
      p.after_wall_ns = after.replay.measured_wall_ns;
      p.before_utilization = before.replay.measured_utilization;
      p.predicted_utilization = r.prediction.utilization;
      p.after_utilization = after.replay.measured_utilization;
      if (r.prediction.step_ns > 0 && after.replay.measured_step_ns > 0) {  // both sides have steps
        p.before_step_ns = before.replay.measured_step_ns;
        p.predicted_step_ns = r.prediction.step_ns;
        p.after_step_ns = after.replay.measured_step_ns;
      }
      for (const Recommendation& a : after.recommendations) p.still_recommended |= a.kind == r.kind;
      d.predictions.push_back(std::move(p));
    }
    // The straggler's (the ranks joined at their collectives) against the after side's ranks, as
    // AnalyzeRanks measures both sides: the mean step and the longest rank's run.
    const StragglerPrediction& sp = before.ranks.straggler.prediction;
    if (sp.ok && after.ranks.present) {
      PredictionCheck p;
      p.kind = "straggler";
      p.before_wall_ns = sp.measured_wall_ns;
      p.predicted_wall_ns = sp.predicted_wall_ns;
      p.after_wall_ns = after.ranks.run_ns;
      p.before_step_ns = sp.measured_step_ns;
      p.predicted_step_ns = sp.predicted_step_ns;
      p.after_step_ns = after.ranks.step_ns;
      p.before_utilization = sp.measured_utilization;
      p.predicted_utilization = sp.predicted_utilization;
      p.after_utilization = after.Utilization();
      p.still_recommended = after.ranks.straggler.found;
      d.predictions.push_back(std::move(p));
    }
  }
  return d;
}

std::string RenderDiffText(const TraceDiff& d) {
  std::string s;
  absl::StrAppend(&s, "GPU-Util (compute busy / wall)   ", FormatPercent(d.before_utilization), " -> ",
                  FormatPercent(d.after_utilization), "  (", SignedPoints(d.after_utilization - d.before_utilization), ")\n");
  absl::StrAppend(&s, "steady-state GPU-Util            ", FormatPercent(d.before_steady_utilization), " -> ",
                  FormatPercent(d.after_steady_utilization), "  (",
                  SignedPoints(d.after_steady_utilization - d.before_steady_utilization), ")\n");
  if (d.before_sm_coverage >= 0 && d.after_sm_coverage >= 0)  // both traces gave launch configurations
    absl::StrAppend(&s, "SM coverage (how full)           ", FormatPercent(d.before_sm_coverage), " -> ",
                    FormatPercent(d.after_sm_coverage), "  (", SignedPoints(d.after_sm_coverage - d.before_sm_coverage),
                    ")\n");
  absl::StrAppend(&s, "wall                             ", FormatDuration(d.before_wall_ns), " -> ",
                  FormatDuration(d.after_wall_ns), "\n");
  absl::StrAppend(&s, "steady-state idle                ", FormatDuration(d.before_idle_ns), " -> ",
                  FormatDuration(d.after_idle_ns), "  (", SignedDuration(d.after_idle_ns - d.before_idle_ns), ")\n\n");
  absl::StrAppend(&s, absl::StrFormat("%-18s %12s %7s %12s %7s %13s %10s\n", "Idle by cause", "before", "share",
                                      "after", "share", "delta", "share"));
  for (const CauseDelta& c : d.causes) {
    if (c.before_ns == 0 && c.after_ns == 0) continue;
    absl::StrAppend(&s, absl::StrFormat("%-18s %12s %7s %12s %7s %13s %10s\n", CauseTitle(c.cause),
                                        FormatDuration(c.before_ns), FormatPercent(c.before_share),
                                        FormatDuration(c.after_ns), FormatPercent(c.after_share),
                                        SignedDuration(c.delta_ns()), SignedPoints(c.after_share - c.before_share)));
  }
  auto stacks = [&s](const char* title, const std::vector<StackDelta>& list) {
    absl::StrAppend(&s, "\n", title, "\n");
    if (list.empty()) absl::StrAppend(&s, "  (none)\n");
    for (const StackDelta& st : list) {
      absl::StrAppend(&s, "  ", SignedDuration(st.delta_ns()), "  (", FormatDuration(st.before_ns), " -> ",
                      FormatDuration(st.after_ns), ", ", CauseTitle(st.cause), ")\n    ",
                      absl::StrJoin(st.functions, " > "), "\n");
    }
  };
  stacks("Stacks whose idle time grew most", d.grew);
  stacks("Stacks whose idle time shrank most", d.shrank);
  if (d.what_if) {
    absl::StrAppend(&s, "\nWhat-if: the before side's predictions against the after side (run: first record to "
                        "last; for the straggler, the ranks' mean step and the longest rank's run)\n");
    if (!d.replay_ok) absl::StrAppend(&s, "  (none: the before side's replay did not hold: ", d.replay_reason, ")\n");
    if (d.replay_ok && d.predictions.empty()) absl::StrAppend(&s, "  (none: no recommendation had a prediction)\n");
    for (const PredictionCheck& p : d.predictions) {
      absl::StrAppend(&s, "  ", p.kind, p.workers ? absl::StrCat(" (", p.workers, p.workers == 1 ? " input worker)" : " input workers)") : "",
                      p.still_recommended ? "" : " — no longer recommended after", "\n    ",
                      p.after_step_ns > 0 ? absl::StrCat("step ", FormatDuration(p.before_step_ns), " -> predicted ",
                                                         FormatDuration(p.predicted_step_ns), ", measured ",
                                                         FormatDuration(p.after_step_ns),
                                                         absl::StrFormat(" (prediction %+.1f%%); ", 100 * p.step_error()))
                                          : "",
                      "run ",
                      FormatDuration(p.before_wall_ns), " -> predicted ", FormatDuration(p.predicted_wall_ns),
                      ", measured ", FormatDuration(p.after_wall_ns),
                      absl::StrFormat(" (prediction %+.1f%%)", 100 * p.wall_error()), "; GPU-Util ",
                      FormatPercent(p.before_utilization), " -> predicted ", FormatPercent(p.predicted_utilization),
                      ", measured ", FormatPercent(p.after_utilization), "\n");
    }
  }
  return s;
}

std::string RenderDiffJson(const TraceDiff& d) {
  Json root = Json::Object();
  root.Set("utilization", Json::Object().Set("before", d.before_utilization).Set("after", d.after_utilization));
  root.Set("steady_utilization",
           Json::Object().Set("before", d.before_steady_utilization).Set("after", d.after_steady_utilization));
  root.Set("sm_coverage_utilization",
           Json::Object()
               .Set("before", d.before_sm_coverage >= 0 ? Json(d.before_sm_coverage) : Json())
               .Set("after", d.after_sm_coverage >= 0 ? Json(d.after_sm_coverage) : Json()));
  root.Set("wall_ns", Json::Object().Set("before", d.before_wall_ns).Set("after", d.after_wall_ns));
  root.Set("steady_idle_ns", Json::Object().Set("before", d.before_idle_ns).Set("after", d.after_idle_ns)
                                 .Set("delta", d.after_idle_ns - d.before_idle_ns));
  Json causes = Json::Array();
  for (const CauseDelta& c : d.causes) {
    causes.Push(Json::Object()
                    .Set("cause", CauseName(c.cause))
                    .Set("before_ns", c.before_ns)
                    .Set("after_ns", c.after_ns)
                    .Set("delta_ns", c.delta_ns())
                    .Set("before_share", c.before_share)
                    .Set("after_share", c.after_share)
                    .Set("delta_share", c.after_share - c.before_share));
  }
  root.Set("causes", std::move(causes));
  auto stacks = [](const std::vector<StackDelta>& list) {
    Json out = Json::Array();
    for (const StackDelta& st : list) {
      Json frames = Json::Array();
      for (const std::string& f : st.functions) frames.Push(f);
      out.Push(Json::Object()
                   .Set("frames", std::move(frames))
                   .Set("before_ns", st.before_ns)
                   .Set("after_ns", st.after_ns)
                   .Set("delta_ns", st.delta_ns())
                   .Set("cause", CauseName(st.cause)));
    }
    return out;
  };
  root.Set("stacks_grew", stacks(d.grew));
  root.Set("stacks_shrank", stacks(d.shrank));
  if (d.what_if) {
    Json predictions = Json::Array();
    for (const PredictionCheck& p : d.predictions) {
      Json j = Json::Object()
                   .Set("kind", p.kind)
                   .Set("wall_ns_before", p.before_wall_ns)
                   .Set("wall_ns_predicted", p.predicted_wall_ns)
                   .Set("wall_ns_after", p.after_wall_ns)
                   .Set("wall_error", p.wall_error())
                   .Set("utilization_before", p.before_utilization)
                   .Set("utilization_predicted", p.predicted_utilization)
                   .Set("utilization_after", p.after_utilization)
                   .Set("still_recommended", p.still_recommended);
      if (p.workers) j.Set("workers", p.workers);
      if (p.after_step_ns > 0) {
        j.Set("step_ns_before", p.before_step_ns)
            .Set("step_ns_predicted", p.predicted_step_ns)
            .Set("step_ns_after", p.after_step_ns)
            .Set("step_error", p.step_error());
      }
      predictions.Push(std::move(j));
    }
    root.Set("what_if", Json::Object()
                            .Set("replay_ok", d.replay_ok)
                            .Set("replay_reason", d.replay_reason)
                            .Set("predictions", std::move(predictions)));
  }
  return root.Dump(2) + "\n";
}

}  // namespace gs::analyzer
