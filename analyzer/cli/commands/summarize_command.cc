// `gsanalyze summarize TRACE -o SUMMARY`: the trace's per-rank summary (proto/gssummary.proto),
// for `gsanalyze report SUMMARY...` to merge (summary/, ranks/).
#include "analyzer/summary/summarize_trace.h"
#include "analyzer/summary/summary_file.h"
#include "analyzer/cli/commands/commands.h"

namespace gs::analyzer::cli {

int RunSummarize(const CliArgs& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<RankSummary> summary = SummarizeTrace(args.traces[0]);
  if (!summary.ok()) {
    err << "gsanalyze: " << summary.status().message() << "\n";
    return kExitBadInput;
  }
  if (absl::Status s = WriteRankSummary(*summary, args.summary_out); !s.ok()) {
    err << "gsanalyze: " << s.message() << "\n";
    return kExitBadInput;
  }
  out << "gsanalyze: " << summary->Label() << ": " << summary->steps.size()
      << " collective steps, " << summary->stacks.size() << " stacks -> " << args.summary_out
      << "\n";
  return kExitOk;
}

}  // namespace gs::analyzer::cli
