// job_ranks.h — the ranks section (ranks/multi_rank.h) of a pass's Analysis, from the summaries
// the pass's RankSummaryObserver made, for the commands that show it: present when the job has
// several traces or one trace with a rank; with `what_if`, the straggler's prediction too (the
// ranks joined at their collectives, whatif/step_join.h).
//
// Pure function; no thread safety concerns.
#ifndef GPUSTALL_ANALYZER_CLI_COMMANDS_JOB_RANKS_H_
#define GPUSTALL_ANALYZER_CLI_COMMANDS_JOB_RANKS_H_

#include <vector>

#include "analyzer/ranks/rank_summary.h"
#include "analyzer/result/analysis.h"

namespace gs::analyzer::cli {

void AttachRanks(const std::vector<RankSummary>& summaries, bool what_if, Analysis* analysis);

}  // namespace gs::analyzer::cli

#endif  // GPUSTALL_ANALYZER_CLI_COMMANDS_JOB_RANKS_H_
