// `gsanalyze export --tables DIR TRACE_OR_DIR...`: the job's analysis as CSV and JSON-lines tables
// (export/tables_export.h says which and why).
#include <utility>

#include "analyzer/cli/job_inputs.h"
#include "analyzer/export/tables_export.h"
#include "analyzer/cli/commands/commands.h"

namespace gs::analyzer::cli {

int RunExportTables(const CliArgs& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<JobInputs> inputs =
      CollectJobTraces(args.traces, "export --tables needs traces (a summary has no idle intervals)");
  if (!inputs.ok()) {
    err << "gsanalyze: " << inputs.status().message() << "\n";
    return kExitBadInput;
  }
  for (const std::string& line : inputs->skipped) err << "gsanalyze: " << line << "\n";
  absl::StatusOr<TablesExportStats> stats = ExportTables(std::move(inputs->traces), args.tables_dir);
  if (!stats.ok()) {
    err << "gsanalyze: " << stats.status().message() << "\n";
    return kExitBadInput;
  }
  out << "gsanalyze: " << stats->intervals << " idle intervals, " << stats->stack_frames
      << " stack frames, " << stats->ranks << " ranks, " << stats->kernel_configs << " kernel configurations -> "
      << args.tables_dir << "/{idle_intervals,stacks,ranks,kernel_configs}.{csv,jsonl}\n";
  return kExitOk;
}

}  // namespace gs::analyzer::cli
