// imported_trace_export.h — `export --chrome` / `--kineto` of a trace read by an importer
// (analyzer/import/: a PyTorch profiler JSON), from the model's records rather than a .gstrace's
// records as written.
//
// The same tracks as trace_event_export.h (host calls per thread with their op stack, device work
// per stream, flows by correlation, one idle track per device holding gsanalyze's steady-state
// intervals named by cause, with the evidence), observed on the one pass like every export
// (analysis/trace_observer.h): the importer delivers records in time order, they are written as
// they go by (records()), and each idle interval as the analysis classifies it. ExportTraceEvents
// (trace_event_export.h) hands an imported trace to this observer, so `gsanalyze export` calls the
// same entry points for every format.
// Chrome's layout (chrome_export.h, with its "SM coverage" counter track) or Kineto's
// (kineto_export.h: pid = device, tid = stream, Kineto categories, the idle track on
// kIdleTidKineto).
// Memory: unmatched correlations and one rendered stack per distinct stack. Thread safety: none.
#ifndef GPUSTALL_ANALYZER_EXPORT_IMPORTED_TRACE_EXPORT_H_
#define GPUSTALL_ANALYZER_EXPORT_IMPORTED_TRACE_EXPORT_H_

#include <memory>
#include <ostream>

#include "absl/status/statusor.h"
#include "analyzer/analysis/trace_observer.h"
#include "analyzer/export/fill_counter_track.h"
#include "analyzer/export/trace_event_export.h"

namespace gs::analyzer {

enum class ImportedExportLayout { kChrome, kKineto };

class ImportedTraceEventObserver final : public TraceObserver {
 public:
  ImportedTraceEventObserver(std::ostream* out, ImportedExportLayout layout);
  ~ImportedTraceEventObserver() override;

  void BeginTrace(size_t index, const TraceImporter& importer, const TraceAnalyzer& analyzer) override;
  RecordSink* records() override;
  void OnIdleInterval(uint32_t device, const IntervalVerdict& verdict) override;
  void OnFillPiece(uint32_t device, const FillPiece& piece) override;
  void EndTrace(size_t index, const TraceImporter& importer, const TraceResult& result) override;

  // After the pass: the stats, or why the file could not be written.
  absl::StatusOr<TraceEventExportStats> Result() const;

 private:
  class ExportSink;
  std::ostream* out_;
  const ImportedExportLayout layout_;
  const TraceAnalyzer* analyzer_ = nullptr;
  std::unique_ptr<ExportSink> sink_;
  std::unique_ptr<FillCounterTrack> fill_;  // Chrome's layout only
  TraceEventExportStats stats_;
  bool closed_ = false;
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_EXPORT_IMPORTED_TRACE_EXPORT_H_
