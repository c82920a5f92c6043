// `gsanalyze html TRACE_OR_DIR... -o report.html`: the self-contained HTML report (report/html/).
// The inputs are taken as `report` takes them (cli/job_inputs.h: a job's run folder too), but
// only traces: the page draws their timelines. The one pass over the traces feeds the analysis,
// the page's timeline (a TimelineObserver) and the ranks section of a job; the page then only
// renders them.
#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "analyzer/analysis/analyze_traces.h"
#include "analyzer/cli/commands/commands.h"
#include "analyzer/cli/commands/job_ranks.h"
#include "analyzer/cli/job_inputs.h"
#include "analyzer/cli/terminal/progress.h"
#include "analyzer/report/html/html_report.h"
#include "analyzer/summary/summarize_trace.h"
#include "analyzer/units/units.h"
#include "analyzer/whatif/replay_observer.h"

namespace gs::analyzer::cli {

namespace {

struct HtmlReportStats {
  uint64_t bytes = 0;            // of the page
  uint64_t records = 0;          // records read
  size_t lanes = 0;              // timeline lanes drawn
  bool exact = true;             // the timeline kept every segment (else buckets only)
  TimeNs idle_ns = 0;            // steady-state idle over all devices
};

// Analyses the traces of `inputs` (errors as AnalyzeTraces': bad input, one line naming the file)
// and writes the page to `out`; `warnings` receives the analysis' warnings (damaged files).
absl::StatusOr<HtmlReportStats> WriteHtmlReport(JobInputs inputs, std::ostream* out,
                                                const html::HtmlReportOptions& options,
                                                std::vector<std::string>* warnings,
                                                const AnalyzeProgress& progress, bool what_if) {
  const std::vector<std::string> paths = inputs.TracePaths();
  html::Timeline timeline(options.timeline);
  html::TimelineObserver observer(&timeline, paths.size());
  RankSummaryObserver ranks;      // the ranks section of a job, as the report's
  whatif::ReplayObserver replay;  // --what-if: the predictions beside the advice
  AnalyzeHooks hooks;
  hooks.progress = progress;
  hooks.observers = {&observer, &ranks};
  if (what_if) hooks.observers.push_back(&replay);
  absl::StatusOr<Analysis> analyzed = AnalyzeTraces(std::move(inputs.traces), options.analysis, hooks);
  if (!analyzed.ok()) return analyzed.status();
  Analysis analysis = std::move(*analyzed);
  if (what_if) {
    AttachWhatIf(ranks.summaries(), replay.replays(), &analysis);
  } else {
    AttachRanks(ranks.summaries(), false, &analysis);
  }
  *warnings = analysis.warnings;

  std::string title = "gpustall report";
  if (paths.size() == 1) absl::StrAppend(&title, ": ", paths[0]);
  else absl::StrAppend(&title, ": ", paths.size(), " traces");
  const std::string page = html::RenderHtmlPage(analysis, timeline, title, options);
  out->write(page.data(), static_cast<std::streamsize>(page.size()));
  if (!*out) return absl::InternalError("write failed");

  HtmlReportStats stats;
  stats.bytes = page.size();
  stats.records = analysis.events;
  stats.lanes = timeline.lanes();
  stats.exact = timeline.exact();
  stats.idle_ns = analysis.steady_idle_ns;
  return stats;
}

}  // namespace

int RunHtml(const CliArgs& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<JobInputs> inputs = CollectJobTraces(
      args.traces, "the page draws the traces themselves; give the traces, or use `gsanalyze report` for the summaries");
  if (!inputs.ok()) {
    err << "gsanalyze: " << inputs.status().message() << "\n";
    return kExitBadInput;
  }
  for (const std::string& line : inputs->skipped) err << "gsanalyze: " << line << "\n";
  const std::vector<std::string> traces = inputs->TracePaths();
  std::ofstream file(args.html_out, std::ios::binary | std::ios::trunc);
  if (!file) {
    err << "gsanalyze: cannot write " << args.html_out << "\n";
    return kExitBadInput;
  }
  std::vector<std::string> warnings;
  ProgressLine progress(&err, args.progress);  // on a terminal only; erased before the summary
  absl::StatusOr<HtmlReportStats> stats =
      WriteHtmlReport(
          *std::move(inputs), &file, {}, &warnings,
          [&](size_t i, uint64_t read, uint64_t size) { progress.Update(i, traces.size(), traces[i], read, size); },
          args.what_if);
  progress.Finish();
  file.close();
  if (stats.ok() && !file) stats = absl::InternalError("write failed: " + args.html_out);
  if (!stats.ok()) {
    err << "gsanalyze: " << stats.status().message() << "\n";
    std::remove(args.html_out.c_str());  // no half-written page for a browser to choke on
    return kExitBadInput;
  }
  for (const std::string& w : warnings) err << "gsanalyze: warning: " << w << "\n";
  out << "wrote " << args.html_out << ": " << stats->bytes / 1024 << " KiB, " << stats->records << " records, "
      << stats->lanes << " timeline lanes ("
      << (stats->exact ? "every segment kept" : "decimated to buckets: over the exact-segment budget") << "), "
      << FormatDuration(stats->idle_ns) << " of steady-state idle\n";
  return kExitOk;
}

}  // namespace gs::analyzer::cli
