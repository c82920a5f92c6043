// `gsanalyze diff`: before/after of two (sets of) traces.
#include "analyzer/analysis/analyze_traces.h"
#include "analyzer/cli/commands/commands.h"
#include "analyzer/export/collapsed_stacks.h"
#include "analyzer/export/trace_diff.h"

namespace gs::analyzer::cli {

int RunDiff(const CliArgs& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<Analysis> before = AnalyzeTraces(args.traces, AllStacksOptions());
  if (!before.ok()) {
    err << "gsanalyze: " << before.status().message() << "\n";
    return kExitBadInput;
  }
  absl::StatusOr<Analysis> after = AnalyzeTraces(args.after_traces, AllStacksOptions());
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
