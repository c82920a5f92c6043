// step_join.h — a data-parallel job's ranks joined at their collectives: the job-level replay
// behind the straggler's what-if ("a straggler rank brought to the median rank's host time").
//
// One process's replay (replay.h) takes a collective kernel's duration as measured, its wait for
// the other ranks included: it cannot see them. Here the ranks meet, step by step (the k-th
// collective of every rank, RankSummary::steps, paired by index as multi_rank.h pairs them). For
// each step k after the first:
//   arrival  a(r, k) = start of r's collective k - end of its collective k-1: the rank's own
//            work between two collectives (its device's work, and its idle time waiting for its
//            host), on its own clock, so no clock alignment enters;
//   own work w(k) = the shortest duration of collective k over the ranks (the last to arrive
//            waited for nobody, so its duration is the collective's own);
//   step     D(k) = max over r of a(r, k) + w(k): an all-reduce ends when the last rank arrived
//            plus its own work, and every rank's next step starts there.
// The check: the sum of D(k) against every rank's own steps (the end of its last compared
// collective less the end of its first) within the tolerance, the worst rank's, else no prediction
// and the reason: it holds where every rank's steps last as long as the others' (the all-reduce
// holds them together), and fails where ranks drift apart (collectives that wait for no one) or a
// rank's trace lacks some of the job's collectives (a sampled trace). The steps are those the
// ranks section paired (RankRow::first_step). The fix: at
// each step the straggler's host-bound idle (RankStep::host_bound_idle_ns) beyond the median of
// the other ranks' at that step is gone, a'(s, k) = a(s, k) - max(0, hb(s, k) - median hb(k)),
// and the steps re-joined save sum D - sum D'. Where every rank's clock is aligned, the first
// collective is joined too (below, JoinSteps) and the straggler's host-bound idle before it is
// cut alike, which saves E0 - E0'. The predicted step is the measured one less the steps' saving
// per step, the run each rank's measured wall less the whole saving (the job's: its longest
// rank), and GPU-Util each rank's compute busy time less the waiting in collectives the join no
// longer has ((D - a) - (D' - a') per rank and step).
// Not modelled: a rank's own work overlapping its collective (the next step's kernels queued on
// another stream before the all-reduce ended); with clocks that are not aligned, the time before
// the first collective (ranks start apart: the join starts at its end); ranks without
// collectives (kept as measured).
//
// Pure function; no thread safety concerns.
#ifndef GPUSTALL_ANALYZER_WHATIF_STEP_JOIN_H_
#define GPUSTALL_ANALYZER_WHATIF_STEP_JOIN_H_

#include <vector>

#include "analyzer/ranks/multi_rank.h"
#include "analyzer/ranks/rank_summary.h"
#include "analyzer/whatif/replay.h"

namespace gs::analyzer::whatif {

// The ranks' steps joined. `ranks[r]`: rank r's step collectives, as measured or replayed (at
// least `steps` of them); `own[k]`: collective k's own work. For k = 1 .. steps - 1 (index k - 1):
// D(k) = max over r of a(r, k) + own[k]. With `offsets` (each rank's clock offset onto a common
// clock: the ranks section's, where every rank's clock is aligned) the first collective is
// joined too: it ends for every rank at E0 = max over r of (its start + offset) + own[0] (before
// it the ranks started apart, so only aligned clocks can join it); without, each rank's first
// collective ends where it ended.
struct JoinedSteps {
  std::vector<TimeNs> step;
  TimeNs total = 0;  // the sum of D(k)
  bool first_joined = false;
  TimeNs first_end = 0;  // E0, on the common clock
  // Where rank r's first collective ends in the join, on its own clock.
  TimeNs FirstEnd(const std::vector<StepTimes>& rank, TimeNs offset) const {
    return first_joined ? first_end - offset : rank[0].end;
  }
  // Rank r's time in collective k in the join: E0 - its start (k = 0, joined), D(k) - a(r, k).
  TimeNs InCollective(const std::vector<StepTimes>& rank, TimeNs offset, size_t k) const;
  // Rank r's wall and compute busy time with its steps replaced by the joined ones (its time in
  // each collective, InCollective, for its duration).
  TimeNs Wall(const std::vector<StepTimes>& rank, TimeNs offset, TimeNs wall) const;
  TimeNs Busy(const std::vector<StepTimes>& rank, TimeNs offset, TimeNs busy) const;
};
JoinedSteps JoinSteps(const std::vector<const std::vector<StepTimes>*>& ranks, const std::vector<TimeNs>& own,
                      size_t steps, const std::vector<TimeNs>* offsets = nullptr);
// own[k]: the shortest duration of collective k over the ranks (the last to arrive waited for
// nobody).
std::vector<TimeNs> OwnWork(const std::vector<const std::vector<StepTimes>*>& ranks, size_t steps);

// Sets section->straggler.prediction where the section names a straggler; `ranks` are the
// summaries the section was built from (AnalyzeRanks).
void PredictStraggler(const std::vector<RankSummary>& ranks, RanksSection* section,
                      double tolerance = 0.03);

}  // namespace gs::analyzer::whatif

#endif  // GPUSTALL_ANALYZER_WHATIF_STEP_JOIN_H_
