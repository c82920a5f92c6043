#include "analyzer/cli/commands/job_ranks.h"

#include "analyzer/ranks/multi_rank.h"
#include "analyzer/whatif/predictions.h"
#include "analyzer/whatif/step_join.h"

namespace gs::analyzer::cli {

void AttachRanks(const std::vector<RankSummary>& summaries, bool what_if, Analysis* a) {
  if (a->traces.size() < 2 && !(a->traces.size() == 1 && a->traces[0].rank)) return;
  a->ranks = AnalyzeRanks(summaries);
  if (what_if) whatif::PredictStraggler(summaries, &a->ranks);
}

void AttachWhatIf(const std::vector<RankSummary>& summaries, const std::vector<whatif::TraceReplay>& replays,
                  Analysis* a) {
  AttachRanks(summaries, true, a);
  whatif::AttachPredictions(replays, a);
}

}  // namespace gs::analyzer::cli
