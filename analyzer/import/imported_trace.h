// imported_trace.h — a trace of another tool's format, read into the analyzer's model.
//
// Importers sit beside the .gstrace reader: each turns its format into the same RecordSink calls,
// TraceInfo and TraceTables, so nothing downstream knows which one produced the model.
// model/importer.h's TraceImporter asks OpenImported() first and wraps what it returns.
//
//   absl::StatusOr<std::unique_ptr<ImportedTrace>> t = OpenImported(path);
//   if (!t.ok()) return t.status();          // recognised, but bad: one line naming the file
//   if (*t == nullptr) ...                   // not a format any importer knows: try .gstrace
//   (*t)->ReadAll(&sink);
//
// How to add an importer:
//   1. A folder beside kineto/ with its own CMake target, implementing ImportedTrace.
//   2. A content test (magic bytes, not the file name) and an Open in OpenImported's list.
//   3. Real files of that format as test data, with their source and licence beside them.
//
// Thread safety: none; one thread uses an ImportedTrace.
#ifndef GPUSTALL_ANALYZER_IMPORT_IMPORTED_TRACE_H_
#define GPUSTALL_ANALYZER_IMPORT_IMPORTED_TRACE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
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

// The importer that recognises `path` by its content, opened; nullptr when none does (the caller
// then reads it as a .gstrace). An error when one recognises it and it is bad (one line, naming
// the file).
absl::StatusOr<std::unique_ptr<ImportedTrace>> OpenImported(const std::string& path);
// True when some importer recognises the file's content (what Open does with it: JSON is read as
// a PyTorch profiler trace, and a bad one is an error that says so).
bool IsImportedTrace(const std::string& path);
// Stricter, for choosing the traces in a folder that may hold other files (a job's other JSON):
// the content leaves no doubt (a JSON object naming "traceEvents" in its first MiB).
bool IsImportedTraceBeyondDoubt(const std::string& path);

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_IMPORT_IMPORTED_TRACE_H_
