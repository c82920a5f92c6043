// importer.h — reads a .gstrace file with the reader library (analyzer/reader) and delivers its
// records, converted to the model's types, to a RecordSink; the trace's metadata and losses go
// into a TraceInfo, and its interned tables are offered as TraceTables.
//
// Clocks: the agent maps device timestamps onto host CLOCK_MONOTONIC before writing (issue 3),
// so records of one trace share a clock and are used as they are. Traces of different processes
// on one host share CLOCK_MONOTONIC; each device is analysed within its own trace, so no
// cross-trace alignment is needed for the per-device analysis.
//
// Other formats (analyzer/import/: PyTorch profiler JSON) are recognised by content in Open()
// and read by their importer behind the same interface.
//
// Thread safety: none. Lifetimes: `tables()` is valid while the TraceImporter lives.
#ifndef GPUSTALL_ANALYZER_MODEL_IMPORTER_H_
#define GPUSTALL_ANALYZER_MODEL_IMPORTER_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analyzer/model/record_sink.h"
#include "analyzer/model/trace_tables.h"

namespace gs::reader {
class TraceReader;
}

namespace gs::analyzer {

class ImportedTrace;

class TraceImporter {
 public:
  // Opens the trace and reads its header. Errors (one line, naming the file): not a trace,
  // newer version, unreadable, cut before the header.
  static absl::StatusOr<std::unique_ptr<TraceImporter>> Open(const std::string& path);
  // The same over a trace held in memory (fuzzers, tests); `name` stands for the path in
  // messages and in info().path.
  static absl::StatusOr<std::unique_ptr<TraceImporter>> FromBuffer(std::string bytes,
                                                                   const std::string& name);
  ~TraceImporter();

  // Reads every record into `sink`. Damage is counted (info().losses), not an error; only I/O
  // failures are. Records whose timestamps cannot be real (more than 14 days from the trace's
  // start, longer than 7 days, or ending before they start: a damaged or hostile file) are
  // dropped and counted with the damaged frames, so that nothing downstream is sized by them.
  absl::Status ReadAll(RecordSink* sink);
  // Called by ReadAll after each chunk with the bytes of the file read so far (a progress line).
  void set_progress(std::function<void(uint64_t bytes_read)> progress) { progress_ = std::move(progress); }

  // Metadata and losses (complete after ReadAll).
  const TraceInfo& info() const { return info_; }
  const TraceTables& tables() const;
  // One line when the file was cut or damaged ("" otherwise), for the report's warnings.
  std::string DamageWarning() const;
  uint64_t file_bytes() const;

 private:
  class ReaderTables;
  TraceImporter() = default;
  static absl::StatusOr<std::unique_ptr<TraceImporter>> Wrap(
      absl::StatusOr<std::unique_ptr<reader::TraceReader>> reader, const std::string& path);
  void UpdateInfo();
  // False (and counted) for a record whose times cannot be real: see importer.cc.
  bool Plausible(uint64_t start_ns, uint64_t end_ns);

  std::unique_ptr<ImportedTrace> imported_;  // another format's trace (reader_ is then null)
  std::unique_ptr<reader::TraceReader> reader_;
  std::unique_ptr<ReaderTables> tables_;
  TraceInfo info_;
  uint64_t anchor_ns_ = 0;             // the trace's start (0: take the first record's time)
  uint64_t implausible_records_ = 0;   // records dropped by Plausible()
  std::function<void(uint64_t)> progress_;
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_MODEL_IMPORTER_H_
