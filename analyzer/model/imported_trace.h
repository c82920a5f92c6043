// imported_trace.h — a trace of another tool's format, read into the analyzer's model.
//
// Importers (analyzer/import/) sit beside the .gstrace reader: each turns its format into the same
// RecordSink calls, TraceInfo and TraceTables, so nothing downstream knows which one produced the
// model. This is the interface they implement; TraceImporter (importer.h) wraps one
// (TraceImporter::FromImported), so the one pass (analysis/analyze_traces.cc) and its observers
// see every format through the same TraceImporter. Which format a file is, and the importer that
// reads it, is analyzer/import/open_imported.h's business, on the descriptor the pass opened.
//
// How to add an importer: analyzer/import/open_imported.h says.
//
// Thread safety: none; one thread uses an ImportedTrace.
#ifndef GPUSTALL_ANALYZER_MODEL_IMPORTED_TRACE_H_
#define GPUSTALL_ANALYZER_MODEL_IMPORTED_TRACE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "analyzer/model/record_sink.h"
#include "analyzer/model/trace_tables.h"

namespace gs::analyzer {

class ImportedTrace {
 public:
  virtual ~ImportedTrace() = default;
  // Delivers every record to `sink`, in time order. Errors: I/O only.
  virtual absl::Status ReadAll(RecordSink* sink) = 0;
  // Complete once opened. `tables()` lives as long as this object.
  virtual const TraceInfo& info() const = 0;
  virtual const TraceTables& tables() const = 0;
  // One line when the file was cut or damaged ("" otherwise).
  virtual std::string DamageWarning() const = 0;
  virtual uint64_t file_bytes() const = 0;
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_MODEL_IMPORTED_TRACE_H_
