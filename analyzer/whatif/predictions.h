// predictions.h — the replays of a job's traces (replay_observer.h) into its Analysis: the replay
// check (Analysis::replay) and, where it held for every trace, each recommendation's prediction
// (Recommendation::prediction), the predicted ones ranked by how much run time they save.
//
// A job of several traces (ranks) runs as long as its longest trace: a fix's run time is the
// longest trace's with the fix (a trace the fix does not touch keeps its unmodified replay), its
// GPU-Util the compute busy time of all traces over their walls. Ranks that meet at their
// collectives (the ranks section paired three or more steps: call AttachRanks first) are joined
// there (step_join.h): a fix that lets one rank arrive sooner shortens every rank's steps only as
// far as the last rank to arrive allows, and its check is the joined replay's run against the
// measured one. Input workers: the smallest N of
// 1, 2, 4, 8, 16 above the trace's workers whose run is within 5% of the best such N; at most the
// host's cores less one (where the traces say; else 8) unless the workers wait on storage or on
// something else (accounting/input_workers.h verdict), which needs no core. Where no more workers
// fit, the prediction is the bound: input preparation free (cheaper batches), workers 0.
//
// Pure function; no thread safety concerns.
#ifndef GPUSTALL_ANALYZER_WHATIF_PREDICTIONS_H_
#define GPUSTALL_ANALYZER_WHATIF_PREDICTIONS_H_

#include <vector>

#include "analyzer/result/analysis.h"
#include "analyzer/whatif/replay_observer.h"

namespace gs::analyzer::whatif {

void AttachPredictions(const std::vector<TraceReplay>& replays, Analysis* analysis);

}  // namespace gs::analyzer::whatif

#endif  // GPUSTALL_ANALYZER_WHATIF_PREDICTIONS_H_
