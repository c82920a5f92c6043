#include "analyzer/ranks/multi_rank.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/model/median.h"
#include "analyzer/units/units.h"

namespace gs::analyzer {

bool IsHostBound(Cause cause) {
  return cause == Cause::kHostWork || cause == Cause::kAllocator ||
         cause == Cause::kPageableCopy || cause == Cause::kLaunchOverhead;
}

bool IsCollectiveKernelName(const std::string& name) {
  // NCCL 2.19+ names its kernels ncclDevKernel_<Coll>_..., earlier versions ncclKernel_<Coll>_...
  return absl::StartsWith(name, "ncclDevKernel") || absl::StartsWith(name, "ncclKernel");
}

double RankSummary::Utilization() const {
  return wall_ns > 0 ? static_cast<double>(compute_busy_ns) / static_cast<double>(wall_ns) : 0;
}

double RankSummary::SteadyUtilization() const {
  return steady_wall_ns > 0
             ? static_cast<double>(compute_busy_ns) / static_cast<double>(steady_wall_ns)
             : 0;
}

std::optional<double> RankSummary::SmCoverageUtilization() const {
  if (!sm_coverage_busy_ns || wall_ns <= 0) return std::nullopt;
  return static_cast<double>(*sm_coverage_busy_ns) / static_cast<double>(wall_ns);
}

std::optional<double> RankSummary::EstOccupancyUtilization() const {
  if (!est_occupancy_busy_ns || wall_ns <= 0) return std::nullopt;
  return static_cast<double>(*est_occupancy_busy_ns) / static_cast<double>(wall_ns);
}

TimeNs RankSummary::HostBoundIdle() const {
  TimeNs sum = 0;
  for (int c = 0; c < kNumCauses; ++c) {
    if (IsHostBound(static_cast<Cause>(c))) sum += idle_by_cause[c];
  }
  return sum;
}

std::string RankSummary::Label() const {
  std::string where = absl::StrCat("pid ", pid, host_name.empty() ? "" : " on ", host_name);
  return rank ? absl::StrCat("rank ", *rank, " (", where, ")") : where;
}

namespace {

// Maps every rank onto the reference rank's (the first row's) CLOCK_MONOTONIC.
ClockAlignment AlignClocks(const std::vector<const RankSummary*>& ranks,
                           std::vector<RankRow>* rows) {
  ClockAlignment a;
  std::set<std::string> boots, hosts;
  for (const RankSummary* r : ranks) {
    boots.insert(r->boot_id);
    hosts.insert(r->host_id.empty() ? r->host_name : r->host_id);
  }
  a.boots = boots.size();
  a.hosts = hosts.size();
  if (ranks.empty()) return a;
  const RankSummary& ref = *ranks[0];
  auto realtime_offset = [](const RankSummary& r) {
    return static_cast<TimeNs>(r.clock_realtime_ns) - static_cast<TimeNs>(r.clock_monotonic_ns);
  };
  // Every kind of clock but kNone is a (trace time, wall time) pair, so one formula maps any rank
  // onto the reference: a Kineto trace's baseTimeNanoseconds is the wall time at its time 0, and
  // epoch timestamps are wall time at 0 + 0.
  bool crossed = false;
  size_t of_kind[4] = {};
  for (size_t i = 0; i < ranks.size(); ++i) {
    const RankSummary& r = *ranks[i];
    ++of_kind[std::min<size_t>(static_cast<size_t>(r.clock), 3)];
    (*rows)[i].clock_offset_ns = 0;
    if (r.clock == RankClock::kHeader && ref.clock == RankClock::kHeader && !r.boot_id.empty() &&
        r.boot_id == ref.boot_id)
      continue;  // one boot: CLOCK_MONOTONIC is shared
    // kNone: times as written, nothing to align them by; i == 0: the reference itself.
    if (r.clock == RankClock::kNone || ref.clock == RankClock::kNone || i == 0) continue;
    crossed = true;
    (*rows)[i].clock_offset_ns = realtime_offset(r) - realtime_offset(ref);
    a.residual_error_ns = std::max<TimeNs>(
        a.residual_error_ns, static_cast<TimeNs>(r.clock_uncertainty_ns + ref.clock_uncertainty_ns));
  }
  a.realtime_unmeasured = crossed;
  const size_t n = ranks.size();
  if (of_kind[static_cast<size_t>(RankClock::kHeader)] == n) {
    a.method = crossed ? "CLOCK_REALTIME pairs of the headers (NTP agreement unmeasured)"
                       : "one boot, shared CLOCK_MONOTONIC";
  } else if (ref.clock == RankClock::kNone) {
    a.method = "not aligned: the first rank's times have no wall clock (no baseTimeNanoseconds, no epoch timestamps)";
  } else {
    // Say which alignment each rank had: "each rank's X", or "X (k of n ranks)".
    auto by = [n](size_t k, const char* what) {
      return k == n ? absl::StrCat("each rank's ", what) : absl::StrCat(what, " (", k, " of ", n, " ranks)");
    };
    std::vector<std::string> aligned;
    if (size_t k = of_kind[static_cast<size_t>(RankClock::kBaseTime)]) aligned.push_back(by(k, "baseTimeNanoseconds"));
    if (size_t k = of_kind[static_cast<size_t>(RankClock::kEpoch)])
      aligned.push_back(by(k, "epoch timestamps as written, no baseTimeNanoseconds"));
    if (size_t k = of_kind[static_cast<size_t>(RankClock::kHeader)])
      aligned.push_back(by(k, "CLOCK_REALTIME pair of the header"));
    const size_t none = of_kind[static_cast<size_t>(RankClock::kNone)];
    a.method = absl::StrCat("wall clocks aligned by ", absl::StrJoin(aligned, ", "),
                              crossed ? " (NTP agreement unmeasured)" : "");
    if (none > 0)
      absl::StrAppend(&a.method, a.method.empty() ? "" : "; ", "not aligned: ",
                      by(none, "times as written (no baseTimeNanoseconds, no epoch timestamps)"));
  }
  // How far apart the aligned ends of each step's collective are (0 when they line up).
  size_t steps = SIZE_MAX;
  for (const RankSummary* r : ranks) steps = std::min(steps, r->steps.size());
  std::vector<TimeNs> spreads;
  for (size_t k = 0; steps != SIZE_MAX && k < steps; ++k) {
    TimeNs lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < ranks.size(); ++i) {
      TimeNs end = ranks[i]->steps[k].collective_end_ns + (*rows)[i].clock_offset_ns;
      lo = std::min(lo, end);
      hi = std::max(hi, end);
    }
    spreads.push_back(hi - lo);
  }
  a.collective_end_spread_ns = Median(std::move(spreads));
  return a;
}

}  // namespace

std::vector<const RankSummary*> RanksInRowOrder(const std::vector<RankSummary>& input) {
  std::vector<const RankSummary*> ranks;
  for (const RankSummary& r : input) ranks.push_back(&r);
  std::stable_sort(ranks.begin(), ranks.end(), [](const RankSummary* a, const RankSummary* b) {
    if (a->rank.has_value() != b->rank.has_value()) return a->rank.has_value();
    return a->rank.value_or(0) < b->rank.value_or(0);
  });
  return ranks;
}

RanksSection AnalyzeRanks(const std::vector<RankSummary>& input) {
  RanksSection out;
  const std::vector<const RankSummary*> ranks = RanksInRowOrder(input);
  out.present = ranks.size() > 1 || (ranks.size() == 1 && ranks[0]->rank.has_value());
  if (!out.present) return out;

  for (const RankSummary* r : ranks) {
    RankRow row;
    row.label = r->Label();
    row.rank = r->rank;
    row.host = r->host_name;
    row.pid = r->pid;
    row.utilization = r->Utilization();
    row.steady_utilization = r->SteadyUtilization();
    row.sm_coverage_utilization = r->SmCoverageUtilization();
    row.est_occupancy_utilization = r->EstOccupancyUtilization();
    row.wall_ns = r->wall_ns;
    row.steady_idle_ns = r->steady_idle_ns;
    row.host_bound_idle_ns = r->HostBoundIdle();
    row.idle_by_cause = r->idle_by_cause;
    TimeNs top = 0;
    for (int c = 0; c < kNumCauses; ++c) {
      if (r->idle_by_cause[c] > top) {
        top = r->idle_by_cause[c];
        row.top_cause = static_cast<Cause>(c);
      }
    }
    row.steps = r->steps.size();
    out.run_ns = std::max(out.run_ns, r->wall_ns / std::max<TimeNs>(1, r->devices));
    row.collective_ns = r->collective_ns;
    out.rows.push_back(std::move(row));
    if (r->world_size && (!out.world_size || *r->world_size > *out.world_size)) out.world_size = r->world_size;
  }
  if (out.world_size) {
    out.notes.push_back(absl::StrCat("world size ", *out.world_size, " (as the traces say): ", ranks.size(), " of its ",
                                     ranks.size() == 1 ? "ranks is" : "ranks are", " here"));
  }
  out.clocks = AlignClocks(ranks, &out.rows);

  // Steps: the k-th collective of every rank that has collectives.
  std::vector<size_t> with_steps;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (!ranks[i]->steps.empty()) with_steps.push_back(i);
  }
  if (with_steps.size() < 2) {
    out.notes.push_back(with_steps.empty()
                            ? "no collective kernels (NCCL) in any trace: ranks are not compared"
                            : "only one rank has collective kernels: ranks are not compared");
    return out;
  }
  size_t steps = SIZE_MAX, most = 0;
  for (size_t i : with_steps) {
    steps = std::min(steps, ranks[i]->steps.size());
    most = std::max(most, ranks[i]->steps.size());
  }
  out.steps_compared = steps;
  if (most != steps) {
    out.notes.push_back(absl::StrCat("ranks have ", steps, " to ", most,
                                     " collectives; the first ", steps, " are compared"));
  }
  TimeNs steps_total = 0;
  for (size_t k = 1; k < steps; ++k) {
    std::vector<TimeNs> step;
    for (size_t i : with_steps) step.push_back(ranks[i]->steps[k].collective_end_ns - ranks[i]->steps[k - 1].collective_end_ns);
    steps_total += Median(std::move(step));
  }
  if (steps > 1) out.step_ns = steps_total / static_cast<TimeNs>(steps - 1);
  std::vector<TimeNs> step_delay(steps, 0);
  std::vector<size_t> step_last(steps, 0);
  for (size_t k = 0; k < steps; ++k) {
    TimeNs shortest = INT64_MAX;
    size_t last = with_steps[0];
    for (size_t i : with_steps) {
      const RankStep& s = ranks[i]->steps[k];
      TimeNs d = s.collective_end_ns - s.collective_start_ns;
      if (d < shortest) {
        shortest = d;
        last = i;
      }
    }
    TimeNs others = 0;
    for (size_t i : with_steps) {
      const RankStep& s = ranks[i]->steps[k];
      TimeNs wait = s.collective_end_ns - s.collective_start_ns - shortest;
      out.rows[i].collective_wait_ns += wait;
      if (i != last) others += wait;
    }
    TimeNs delay = others / static_cast<TimeNs>(with_steps.size() - 1);
    step_last[k] = last;
    if (delay >= kMinStepDelayNs) {
      step_delay[k] = delay;
      out.total_delay_ns += delay;
      out.rows[last].last_at_steps++;
      out.rows[last].delay_caused_ns += delay;
    }
  }
  uint64_t steps_with_delay = 0;
  for (TimeNs d : step_delay) steps_with_delay += d > 0;

  size_t best = with_steps[0];
  for (size_t i : with_steps) {
    if (out.rows[i].delay_caused_ns > out.rows[best].delay_caused_ns) best = i;
  }
  const RankRow& row = out.rows[best];
  if (out.total_delay_ns == 0 || row.delay_caused_ns * 2 <= out.total_delay_ns) {
    out.notes.push_back(out.total_delay_ns == 0
                            ? "the ranks arrive at their collectives together: no straggler"
                            : "collective waits are spread over several late ranks: no single "
                              "straggler");
    return out;
  }
  StragglerVerdict& v = out.straggler;
  v.found = true;
  v.row = best;
  v.label = row.label;
  v.rank = row.rank;
  v.last_at_steps = row.last_at_steps;
  v.steps_with_delay = steps_with_delay;
  v.delay_caused_ns = row.delay_caused_ns;
  v.delay_share = static_cast<double>(row.delay_caused_ns) / static_cast<double>(out.total_delay_ns);
  for (size_t k = 0; k < steps; ++k) {
    if (step_delay[k] > 0 && step_last[k] == best) {
      v.host_bound_idle_ns += ranks[best]->steps[k].host_bound_idle_ns;
      v.idle_ns += ranks[best]->steps[k].idle_ns;
    }
  }
  v.stacks = ranks[best]->stacks;
  v.evidence = absl::StrCat(
      row.label, " arrived last at ", v.last_at_steps, " of ", steps_with_delay,
      " unbalanced collectives; the other ranks' devices waited ",
      FormatDuration(v.delay_caused_ns / std::max<uint64_t>(1, v.last_at_steps)),
      " per step for it (", FormatDuration(v.delay_caused_ns), " each, ",
      FormatPercent(v.delay_share), " of all collective waiting); before those collectives its "
      "own device idled ", FormatDuration(v.idle_ns), ", ", FormatDuration(v.host_bound_idle_ns),
      " of it host-bound");
  return out;
}

}  // namespace gs::analyzer
