// `gsanalyze report`: analyse, render, apply --fail-under.
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "analyzer/analysis/analyze_traces.h"
#include "analyzer/cli/commands/commands.h"
#include "analyzer/cli/commands/job_ranks.h"
#include "analyzer/cli/job_inputs.h"
#include "analyzer/cli/terminal/progress.h"
#include "analyzer/report/report.h"
#include "analyzer/summary/summarize_trace.h"
#include "analyzer/units/units.h"
#include "analyzer/whatif/replay_observer.h"
#include "analyzer/whatif/step_join.h"

namespace gs::analyzer::cli {

namespace {
int TerminalWidth() {
  if (const char* cols = std::getenv("COLUMNS")) {
    int w;
    if (absl::SimpleAtoi(cols, &w) && w >= 40) return w;
  }
  winsize ws{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) return ws.ws_col;
  return 100;
}
}  // namespace

int RunReport(const CliArgs& args, std::ostream& out, std::ostream& err) {
  // Folders (a job's run folder) and summaries (gsanalyze summarize) as well as traces; a job of
  // several ranks, or a trace with a rank, gets the ranks section (ranks/), summarised on the same
  // pass that analyses the traces.
  absl::StatusOr<JobInputs> inputs = CollectJobInputs(args.traces);
  if (!inputs.ok()) {
    err << "gsanalyze: " << inputs.status().message() << "\n";
    return kExitBadInput;
  }
  for (const std::string& line : inputs->skipped) err << "gsanalyze: " << line << "\n";
  ProgressLine progress(&err, args.progress);  // on a terminal only; erased before the report
  const std::vector<std::string> traces = inputs->TracePaths();
  const bool summaries = !inputs->summaries.empty();
  RankSummaryObserver rank_summaries;
  AnalyzeHooks hooks;
  hooks.progress = [&](size_t i, uint64_t read, uint64_t size) {
    progress.Update(i, traces.size(), traces[i], read, size);
  };
  hooks.observers = {&rank_summaries};
  whatif::ReplayObserver replay;  // --what-if: each trace's graph, replayed at its end
  if (args.what_if) hooks.observers.push_back(&replay);
  AnalysisOptions analysis_options;
  analysis_options.jobs =
      args.jobs > 0 ? args.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // The pass reads each trace over the descriptor the intake opened (one open per file).
  std::vector<RankSummary> summarized;  // given summaries: the ranks section's
  absl::StatusOr<Analysis> analysis = summaries ? AnalysisFromJobSummaries(*std::move(inputs), AnalysisOptions(), &summarized)
                                                : AnalyzeTraces(std::move(inputs->traces), analysis_options, hooks);
  if (analysis.ok() && !summaries) {
    if (args.what_if) {
      AttachWhatIf(rank_summaries.summaries(), replay.replays(), &*analysis);
    } else {
      AttachRanks(rank_summaries.summaries(), false, &*analysis);
    }
  }
  if (analysis.ok() && args.what_if && summaries) {
    whatif::PredictStraggler(summarized, &analysis->ranks);  // the ranks joined: summaries suffice
    analysis->notes.push_back(
        "--what-if from summaries: the straggler's prediction only; the other predictions need the traces "
        "themselves (a summary has no graph to replay)");
  }
  progress.Finish();
  if (!analysis.ok()) {
    err << "gsanalyze: " << analysis.status().message() << "\n";
    return kExitBadInput;
  }
  for (const std::string& w : analysis->warnings) err << "gsanalyze: warning: " << w << "\n";
  ReportOptions options;
  options.width = args.width > 0 ? args.width : TerminalWidth();
  options.color = args.color;  // only the text format uses it
  const ReportFormat* format = FindReportFormat(args.format);
  if (format == nullptr) {  // ParseArgs checks; kept for callers that build CliArgs themselves
    err << "gsanalyze: unknown format '" << args.format << "'\n";
    return kExitBadInput;
  }
  out << format->Render(*analysis, options);
  out.flush();
  if (args.fail_under && analysis->SteadyUtilization() < *args.fail_under) {
    err << "gsanalyze: steady-state GPU-Util " << FormatPercent(analysis->SteadyUtilization())
        << " is below --fail-under " << FormatPercent(*args.fail_under) << "\n";
    return kExitBelowThreshold;
  }
  return kExitOk;
}

}  // namespace gs::analyzer::cli
