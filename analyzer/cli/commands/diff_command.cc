// `gsanalyze diff`: before/after of two (sets of) traces.
#include "analyzer/analysis/analyze_traces.h"
#include "analyzer/cli/commands/commands.h"
#include "analyzer/cli/commands/job_ranks.h"
#include "analyzer/export/collapsed_stacks.h"
#include "analyzer/export/trace_diff.h"
#include "analyzer/summary/summarize_trace.h"
#include "analyzer/whatif/replay_observer.h"

namespace gs::analyzer::cli {

namespace {
// One side, with --what-if its replay (whatif/predictions.h) and its ranks with the straggler's
// prediction (job_ranks.h) on the same pass.
absl::StatusOr<Analysis> AnalyzeSide(const std::vector<std::string>& traces, bool what_if) {
  whatif::ReplayObserver replay;
  RankSummaryObserver ranks;
  AnalyzeHooks hooks;
  if (what_if) hooks.observers = {&replay, &ranks};
  absl::StatusOr<Analysis> a = AnalyzeTraces(traces, AllStacksOptions(), hooks);
  if (a.ok() && what_if) AttachWhatIf(ranks.summaries(), replay.replays(), &*a);
  return a;
}
}  // namespace

int RunDiff(const CliArgs& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<Analysis> before = AnalyzeSide(args.traces, args.what_if);
  if (!before.ok()) {
    err << "gsanalyze: " << before.status().message() << "\n";
    return kExitBadInput;
  }
  absl::StatusOr<Analysis> after = AnalyzeSide(args.after_traces, args.what_if);
  if (!after.ok()) {
    err << "gsanalyze: " << after.status().message() << "\n";
    return kExitBadInput;
  }
  for (const std::string& w : before->warnings) err << "gsanalyze: warning: before: " << w << "\n";
  for (const std::string& w : after->warnings) err << "gsanalyze: warning: after: " << w << "\n";
  TraceDiff diff = DiffAnalyses(*before, *after);
  out << (args.format == "json" ? RenderDiffJson(diff) : RenderDiffText(diff));
  out.flush();
  return kExitOk;
}

}  // namespace gs::analyzer::cli
