// job_ranks.h — the ranks section (ranks/multi_rank.h) of a pass's Analysis, from the summaries
// the pass's RankSummaryObserver made, for the commands that show it: present when the job has
// several traces or one trace with a rank; with `what_if`, the straggler's prediction too (the
// ranks joined at their collectives, whatif/step_join.h), and the what-if's predictions beside.
//
// Pure function; no thread safety concerns.
#ifndef GPUSTALL_ANALYZER_CLI_COMMANDS_JOB_RANKS_H_
#define GPUSTALL_ANALYZER_CLI_COMMANDS_JOB_RANKS_H_

#include <vector>

#include "analyzer/ranks/rank_summary.h"
#include "analyzer/result/analysis.h"
#include "analyzer/whatif/replay_observer.h"

namespace gs::analyzer::cli {

void AttachRanks(const std::vector<RankSummary>& summaries, bool what_if, Analysis* analysis);

// --what-if on a pass of traces: the ranks section with the straggler's prediction, then every
// recommendation's prediction from the traces' replays (whatif/predictions.h), in that order: the
// predictions join the ranks as the ranks section paired their steps.
void AttachWhatIf(const std::vector<RankSummary>& summaries, const std::vector<whatif::TraceReplay>& replays,
                  Analysis* analysis);

}  // namespace gs::analyzer::cli

#endif  // GPUSTALL_ANALYZER_CLI_COMMANDS_JOB_RANKS_H_
