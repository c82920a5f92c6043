// `gsanalyze export`: the trace as Chrome or Kineto trace-event JSON and/or idle time as folded stacks.
#include <cstdio>
#include <fstream>

#include "analyzer/analysis/analyze_traces.h"
#include "analyzer/analysis/units.h"
#include "analyzer/cli/commands.h"
#include "analyzer/export/chrome_export.h"
#include "analyzer/export/collapsed_stacks.h"
#include "analyzer/export/imported_trace_export.h"
#include "analyzer/import/imported_trace.h"
#include "analyzer/export/kineto_export.h"

namespace gs::analyzer::cli {

namespace {
// A failed export leaves no half-written file behind (a viewer would choke on it).
int Fail(std::ostream& err, const std::string& path, const std::string& message) {
  err << "gsanalyze: " << message << "\n";
  std::remove(path.c_str());
  return kExitBadInput;
}

// One trace-event dialect (Chrome's or Kineto's) into `path`.
using TraceEventExporter = absl::StatusOr<TraceEventExportStats> (*)(const std::string&, std::ostream*,
                                                                      const AnalysisOptions&);
int ExportTraceEventsTo(TraceEventExporter exporter, const std::string& trace, const std::string& path,
                        std::ostream& out, std::ostream& err) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) {
    err << "gsanalyze: cannot write " << path << "\n";
    return kExitBadInput;
  }
  absl::StatusOr<TraceEventExportStats> stats = exporter(trace, &file, AnalysisOptions());
  file.close();
  if (!stats.ok()) return Fail(err, path, std::string(stats.status().message()));
  if (!file) return Fail(err, path, "write failed: " + path);
  out << "wrote " << path << ": " << stats->events << " events (" << stats->gpu_activities
      << " GPU activities, " << stats->api_calls << " API calls, " << stats->flows << " flows, "
      << stats->idle_intervals << " idle intervals = " << FormatDuration(stats->idle_ns) << ", "
      << stats->nvtx_ranges << " NVTX ranges)\n";
  return kExitOk;
}
}  // namespace

int RunExport(const CliArgs& args, std::ostream& out, std::ostream& err) {
  const std::string& trace = args.traces.front();
  const bool imported = IsImportedTrace(trace);  // another tool's trace (PyTorch profiler JSON)
  if (!args.chrome_out.empty()) {
    if (int rc = ExportTraceEventsTo(imported ? &ExportImportedChromeTrace : &ExportChromeTrace, trace,
                                     args.chrome_out, out, err);
        rc != kExitOk)
      return rc;
  }
  if (!args.kineto_out.empty()) {
    if (int rc = ExportTraceEventsTo(imported ? &ExportImportedKinetoTrace : &ExportKinetoTrace, trace,
                                     args.kineto_out, out, err);
        rc != kExitOk)
      return rc;
  }
  if (!args.collapsed_out.empty()) {
    absl::StatusOr<Analysis> analysis = AnalyzeTraces({trace}, AllStacksOptions());
    if (!analysis.ok()) {
      err << "gsanalyze: " << analysis.status().message() << "\n";
      return kExitBadInput;
    }
    for (const std::string& w : analysis->warnings) err << "gsanalyze: warning: " << w << "\n";
    std::ofstream file(args.collapsed_out, std::ios::binary | std::ios::trunc);
    if (!file) {
      err << "gsanalyze: cannot write " << args.collapsed_out << "\n";
      return kExitBadInput;
    }
    TimeNs total = WriteCollapsedStacks(*analysis, &file);
    file.close();
    if (!file) return Fail(err, args.collapsed_out, "write failed: " + args.collapsed_out);
    out << "wrote " << args.collapsed_out << ": " << analysis->top_stacks.size() << " stacks, "
        << FormatDuration(total) << " of idle time\n";
  }
  return kExitOk;
}

}  // namespace gs::analyzer::cli
