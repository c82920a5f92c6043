// imported_trace_export.h — `export --chrome` / `--kineto` of a trace read by an importer
// (analyzer/import/: a PyTorch profiler JSON), from the model's records rather than a .gstrace's.
//
// The same tracks as trace_event_export.h (host calls per thread with their op stack, device work
// per stream, flows by correlation, one idle track per device holding gsanalyze's steady-state
// intervals named by cause, with the evidence), in one pass: the importer delivers records in time
// order, and the analysis' interval observer writes each interval as it is classified.
// Chrome's layout (chrome_export.h) or Kineto's (kineto_export.h: pid = device, tid = stream,
// Kineto categories, the idle track on kIdleTidKineto).
// Memory: unmatched correlations and one rendered stack per distinct stack. Thread safety: none.
#ifndef GPUSTALL_ANALYZER_EXPORT_IMPORTED_TRACE_EXPORT_H_
#define GPUSTALL_ANALYZER_EXPORT_IMPORTED_TRACE_EXPORT_H_

#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "analyzer/analysis/options.h"
#include "analyzer/export/trace_event_export.h"

namespace gs::analyzer {

enum class ImportedExportLayout { kChrome, kKineto };

absl::StatusOr<TraceEventExportStats> ExportImportedTraceEvents(const std::string& trace_path, std::ostream* out,
                                                                ImportedExportLayout layout,
                                                                const AnalysisOptions& options);
// The two layouts with export_command.cc's exporter signature.
inline absl::StatusOr<TraceEventExportStats> ExportImportedChromeTrace(const std::string& path, std::ostream* out,
                                                                       const AnalysisOptions& options) {
  return ExportImportedTraceEvents(path, out, ImportedExportLayout::kChrome, options);
}
inline absl::StatusOr<TraceEventExportStats> ExportImportedKinetoTrace(const std::string& path, std::ostream* out,
                                                                       const AnalysisOptions& options) {
  return ExportImportedTraceEvents(path, out, ImportedExportLayout::kKineto, options);
}

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_EXPORT_IMPORTED_TRACE_EXPORT_H_
