#include "analyzer/ranks/multi_rank.h"

#include <algorithm>
#include <map>
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

bool IsCollectiveActivity(const GpuActivity& a, const TraceTables& tables,
                          absl::flat_hash_map<uint32_t, bool>* names) {
  if (a.kind == ActivityKind::kCollective) return true;
  if (a.kind != ActivityKind::kKernel) return false;
  auto [it, inserted] = names->try_emplace(a.name, false);
  if (inserted) it->second = IsCollectiveKernelName(tables.StringValue(a.name));
  return it->second;
}

uint32_t StepDevice(const std::vector<uint32_t>& devices) {
  std::map<uint32_t, size_t> per_device;
  for (uint32_t d : devices) ++per_device[d];
  uint32_t step_device = 0;
  size_t best = 0;
  for (const auto& [device, n] : per_device) {  // ascending: the lowest of a tie stays
    if (n > best) {
      best = n;
      step_device = device;
    }
  }
  return step_device;
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
    (*rows)[i].clock_aligned = r.clock != RankClock::kNone && ref.clock != RankClock::kNone;
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
  return a;
}

// How many collectives apart two ranks' step pairings are looked for (StepShift).
constexpr int kMaxStepShift = 3;

// The index shift that pairs rank `other`'s collectives with the reference's (its k + shift with
// the reference's k): the one whose aligned collective ends lie closest (median distance over the
// pairs it makes, at least two), taken over 0 only when those ends lie within a quarter of the
// reference's median step. A profiler window that opened a collective later on one rank shows
// as a shift of one.
int StepShift(const std::vector<RankStep>& ref, TimeNs ref_offset, const std::vector<RankStep>& other,
              TimeNs other_offset) {
  std::vector<TimeNs> lengths;
  for (size_t k = 1; k < ref.size(); ++k) lengths.push_back(ref[k].collective_end_ns - ref[k - 1].collective_end_ns);
  const TimeNs step = Median(std::move(lengths));
  auto distance = [&](int shift, TimeNs* d) {
    std::vector<TimeNs> gaps;
    for (size_t k = 0; k < ref.size(); ++k) {
      const int64_t j = static_cast<int64_t>(k) + shift;
      if (j < 0 || j >= static_cast<int64_t>(other.size())) continue;
      const TimeNs a = other[static_cast<size_t>(j)].collective_end_ns + other_offset;
      const TimeNs b = ref[k].collective_end_ns + ref_offset;
      gaps.push_back(a > b ? a - b : b - a);
    }
    if (gaps.size() < 2) return false;
    *d = Median(std::move(gaps));
    return true;
  };
  TimeNs unshifted = 0, best_d = 0;
  if (!distance(0, &unshifted)) return 0;
  int best = 0;
  best_d = unshifted;
  for (int shift = -kMaxStepShift; shift <= kMaxStepShift; ++shift) {
    TimeNs d = 0;
    if (shift != 0 && distance(shift, &d) && d < best_d) {
      best = shift;
      best_d = d;
    }
  }
  return best != 0 && best_d * 4 < step ? best : 0;
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

bool OneProcess(const std::vector<RankSummary>& ranks) {
  if (ranks.empty()) return false;
  const RankSummary& first = ranks.front();
  for (const RankSummary& r : ranks) {
    if (r.capture_window == 0 || r.pid != first.pid || r.rank != first.rank || r.host_name != first.host_name ||
        r.host_id != first.host_id || r.boot_id != first.boot_id)
      return false;
  }
  return true;
}

RanksSection AnalyzeRanks(const std::vector<RankSummary>& input) {
  RanksSection out;
  const std::vector<const RankSummary*> ranks = RanksInRowOrder(input);
  // Several traces of one process (its capture windows: GS_PERIODIC_MS, gsctl) are not a job.
  out.present = ranks.size() == 1 ? ranks[0]->rank.has_value() : !OneProcess(input);
  if (!out.present) return out;

  for (const RankSummary* r : ranks) {
    RankRow row;
    row.input = static_cast<size_t>(r - input.data());
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
  // Pairing: the k-th compared step of every rank. Where the clocks are aligned, a rank whose
  // capture began at another collective than the first rank's is shifted (StepShift); the steps
  // compared are those every rank captured.
  const size_t ref = with_steps[0];
  std::vector<int64_t> shift(ranks.size(), 0);
  int64_t lo = 0, hi = static_cast<int64_t>(ranks[ref]->steps.size());  // the reference's indices
  size_t most = 0;
  bool shifted = false;
  for (size_t i : with_steps) {
    most = std::max(most, ranks[i]->steps.size());
    if (i != ref && out.rows[i].clock_aligned && out.rows[ref].clock_aligned) {
      shift[i] = StepShift(ranks[ref]->steps, out.rows[ref].clock_offset_ns, ranks[i]->steps,
                           out.rows[i].clock_offset_ns);
    }
    shifted |= shift[i] != 0;
    lo = std::max(lo, -shift[i]);
    hi = std::min(hi, static_cast<int64_t>(ranks[i]->steps.size()) - shift[i]);
  }
  const size_t steps = hi > lo ? static_cast<size_t>(hi - lo) : 0;
  for (size_t i : with_steps) out.rows[i].first_step = static_cast<uint64_t>(lo + shift[i]);
  auto step_of = [&](size_t i, size_t k) -> const RankStep& { return ComparedStep(*ranks[i], out.rows[i], k); };
  out.steps_compared = steps;
  if (shifted) {
    std::vector<std::string> firsts;
    for (size_t i : with_steps) firsts.push_back(absl::StrCat(out.rows[i].first_step + 1));
    out.notes.push_back(absl::StrCat("the ranks' captures began at different collectives: paired by their aligned "
                                     "end times, the ranks' collectives ", absl::StrJoin(firsts, ", "),
                                     " are each one's first compared step"));
  }
  if (most != steps) {
    out.notes.push_back(absl::StrCat("ranks have ", steps, " to ", most, " collectives; the ", steps,
                                     " every rank has are compared"));
  }
  // How far apart the aligned ends of each step's collective are (0 when they line up).
  std::vector<TimeNs> spreads;
  for (size_t k = 0; k < steps; ++k) {
    TimeNs first = INT64_MAX, last = INT64_MIN;
    for (size_t i : with_steps) {
      const TimeNs end = step_of(i, k).collective_end_ns + out.rows[i].clock_offset_ns;
      first = std::min(first, end);
      last = std::max(last, end);
    }
    spreads.push_back(last - first);
  }
  out.clocks.collective_end_spread_ns = Median(std::move(spreads));
  TimeNs steps_total = 0;
  for (size_t k = 1; k < steps; ++k) {
    std::vector<TimeNs> step;
    for (size_t i : with_steps) step.push_back(step_of(i, k).collective_end_ns - step_of(i, k - 1).collective_end_ns);
    steps_total += Median(std::move(step));
  }
  if (steps > 1) out.step_ns = steps_total / static_cast<TimeNs>(steps - 1);
  std::vector<TimeNs> step_delay(steps, 0);
  std::vector<size_t> step_last(steps, 0);
  for (size_t k = 0; k < steps; ++k) {
    TimeNs shortest = INT64_MAX;
    size_t last = with_steps[0];
    for (size_t i : with_steps) {
      const RankStep& s = step_of(i, k);
      TimeNs d = s.collective_end_ns - s.collective_start_ns;
      if (d < shortest) {
        shortest = d;
        last = i;
      }
    }
    TimeNs others = 0;
    for (size_t i : with_steps) {
      const RankStep& s = step_of(i, k);
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
      v.host_bound_idle_ns += step_of(best, k).host_bound_idle_ns;
      v.idle_ns += step_of(best, k).idle_ns;
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
