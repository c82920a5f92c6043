// multi_rank.h — merges RankSummaries into the report's "ranks" section: a row per rank, the
// clock alignment between them, and the straggler, if there is one.
//
// Straggler detection. In a data-parallel job every rank's k-th collective (all-reduce) ends only
// when all ranks have started it, so the rank that arrives last delays all the others: their
// devices sit in the collective kernel, waiting. Per step k (the k-th collective of every rank):
//   wait(r, k)   = duration of r's collective - the shortest duration among the ranks at k
//                  (time in the kernel beyond the collective's own work);
//   last(k)      = the rank with the shortest collective (it waited for nobody);
//   delay(k)     = mean wait(r, k) over the other ranks.
// Steps where delay(k) < kMinStepDelayNs are balanced. The straggler is the rank that was last at
// the steps carrying most of the delay (more than half of it), and its evidence is its own idle
// time before those collectives, split into host-bound causes, and the stacks charged with it.
// Step indices pair the collectives, so the verdict holds whatever the clocks say; where the
// clocks are aligned, a rank whose capture began at another collective (profiler windows opened at
// different steps) is shifted by the whole collectives that line the aligned ends up (within a
// quarter step, at most 3), and the steps every rank captured are compared (RankRow::first_step).
//
// Clocks. Each rank's times are on its own CLOCK_MONOTONIC. Ranks with the same boot id share
// that clock (offset 0, error 0). Other ranks are mapped through their header's
// (monotonic, realtime) pair onto the reference rank's clock (a PyTorch profiler trace's pair is
// its baseTimeNanoseconds at time 0, or (0, 0) where its times are epoch time; one with neither is
// not aligned, and the method says so): the error is the two snapshots'
// uncertainty plus the hosts' realtime disagreement (NTP), which no trace measures; the
// collective end times (equal on every rank in a real all-reduce, up to the completion's fan-out)
// bound it from the data, reported as collective_end_spread_ns.
//
// Plain data and a pure function; no thread safety concerns.
#ifndef GPUSTALL_ANALYZER_RANKS_MULTI_RANK_H_
#define GPUSTALL_ANALYZER_RANKS_MULTI_RANK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/ranks/rank_summary.h"

namespace gs::analyzer {

inline constexpr TimeNs kMinStepDelayNs = 100000;  // 100 µs: below it a step is balanced

struct RankRow {
  std::string label;              // RankSummary::Label()
  std::optional<int32_t> rank;
  std::string host;
  int64_t pid = 0;
  double utilization = 0, steady_utilization = 0;
  // How full the kernels kept its devices (RankSummary::SmCoverageUtilization, ...); unknown
  // when its trace gave no launch configurations (no SM limits: no occupancy).
  std::optional<double> sm_coverage_utilization, est_occupancy_utilization;
  TimeNs wall_ns = 0, steady_idle_ns = 0, host_bound_idle_ns = 0;
  CauseNs idle_by_cause{};
  Cause top_cause = Cause::kOther;  // largest idle cause (kOther when no idle)
  uint64_t steps = 0;
  TimeNs collective_ns = 0;       // time in collective kernels
  TimeNs collective_wait_ns = 0;  // of which waiting for other ranks (sum of wait(r, k))
  uint64_t last_at_steps = 0;     // steps where this rank arrived last (delay(k) counted only)
  TimeNs delay_caused_ns = 0;     // sum of delay(k) over those steps
  TimeNs clock_offset_ns = 0;     // add to this rank's times to get the reference rank's clock
  bool clock_aligned = false;     // ... and that maps them (neither it nor the reference is kNone)
  size_t input = 0;               // its summary's index in what AnalyzeRanks was given (trace order)
  uint64_t first_step = 0;        // its step (RankSummary::steps index) paired with the first compared
};

// The straggler brought to the other ranks' median host-bound idle, the ranks joined at their collectives
// (analyzer/whatif/step_join.h), when asked for (--what-if). Step figures are means over the
// steps joined; the run is the job's longest rank; GPU-Util as the report weighs it.
struct StragglerPrediction {
  bool ran = false;
  bool ok = false;             // the join reproduced the measured steps within `tolerance`
  std::string reason;          // why no prediction: one sentence
  uint64_t steps = 0;          // steps joined (between the first collective and the last)
  TimeNs measured_step_ns = 0, replayed_step_ns = 0, predicted_step_ns = 0;
  double step_error = 0;       // the joined steps against a rank's own, the worst: (joined - own) / own
  double tolerance = 0;
  TimeNs measured_wall_ns = 0, predicted_wall_ns = 0;
  double measured_utilization = 0, predicted_utilization = 0;
};

struct StragglerVerdict {
  bool found = false;
  size_t row = 0;                 // index into RanksSection::rows
  std::string label;
  std::optional<int32_t> rank;
  uint64_t last_at_steps = 0, steps_with_delay = 0;
  TimeNs delay_caused_ns = 0;     // the other ranks' mean wait, summed over its steps
  double delay_share = 0;         // of all steps' delay
  TimeNs host_bound_idle_ns = 0;  // its host-bound idle before the collectives of its steps
  TimeNs idle_ns = 0;             // all its idle before those collectives
  std::vector<RankStack> stacks;  // its stacks, by host-bound idle in step windows
  std::string evidence;           // one sentence with the numbers
  StragglerPrediction prediction;
};

struct ClockAlignment {
  // "one boot, shared CLOCK_MONOTONIC", "CLOCK_REALTIME pairs ...", for Kineto traces "wall clocks
  // aligned by each rank's baseTimeNanoseconds ..." or "not aligned: ..." (RankClock)
  std::string method;
  uint64_t boots = 0;             // distinct boot ids
  uint64_t hosts = 0;             // distinct host ids (names when ids are missing)
  TimeNs residual_error_ns = 0;   // bound from the snapshots (0 within one boot)
  bool realtime_unmeasured = false;  // across boots: NTP disagreement adds an unknown error
  TimeNs collective_end_spread_ns = 0;  // median over steps of max-min aligned collective end
};

struct RanksSection {
  bool present = false;           // more than one rank, or a rank number in a trace
  std::vector<RankRow> rows;      // by rank, then source order
  std::optional<int32_t> world_size;  // the job's ranks, where a trace says (the largest said)
  uint64_t steps_compared = 0;    // min steps over ranks with collectives
  // The job's mean step between its first and last compared collectives (per step the median
  // over ranks of end(k) - end(k-1)); 0 with fewer than two steps. The job's run: its longest
  // rank's wall (per device).
  TimeNs step_ns = 0, run_ns = 0;
  TimeNs total_delay_ns = 0;      // sum of delay(k)
  ClockAlignment clocks;
  StragglerVerdict straggler;
  std::vector<std::string> notes;  // why something could not be decided
};

// Rank `r`'s k-th compared step (k from 0 to RanksSection::steps_compared), `row` being its row.
inline const RankStep& ComparedStep(const RankSummary& r, const RankRow& row, size_t k) {
  return r.steps[row.first_step + k];
}

// The ranks in the order of RanksSection::rows (by rank, then input order).
std::vector<const RankSummary*> RanksInRowOrder(const std::vector<RankSummary>& ranks);

// True when every summary is a capture window (RankSummary::capture_window) of one process: the
// same pid, rank, host and boot. False for none.
bool OneProcess(const std::vector<RankSummary>& ranks);

// Merges `ranks` (in any order). A section is `present` with two or more ranks, or one whose
// trace carries a rank number; not for several traces of one process (OneProcess): its windows
// are not ranks to compare.
RanksSection AnalyzeRanks(const std::vector<RankSummary>& ranks);

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_RANKS_MULTI_RANK_H_
