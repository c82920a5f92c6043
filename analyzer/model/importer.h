// importer.h — reads a .gstrace file with the reader library (analyzer/reader) and delivers its
// records, converted to the model's types, to a RecordSink; the trace's metadata and losses go
// into a TraceInfo, and its interned tables are offered as TraceTables.
//
// Clocks: the agent maps device timestamps onto host CLOCK_MONOTONIC before writing,
// so records of one trace share a clock and are used as they are. Traces of different processes
// on one host share CLOCK_MONOTONIC; each device is analysed within its own trace, so no
// cross-trace alignment is needed for the per-device analysis.
//
// Other formats (analyzer/import/: PyTorch profiler JSON) are read by their importer
// (imported_trace.h) behind the same interface: FromImported wraps one. Which one reads a file is
// decided by its content where the file is opened, in the one pass (analysis/analyze_traces.cc).
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
class InternTables;
class TraceReader;
struct ChunkEvents;
}

namespace gs::analyzer {

class ImportedTrace;

class TraceImporter {
 public:
  // A .gstrace over `fd` (open for reading at offset 0, owned from here on: the one pass opened
  // it, analysis/trace_file.h); reads its header. Errors (one line, naming `path`): not a
  // trace, newer version, unreadable, cut before the header. `decode_threads`: see
  // reader::ReaderOptions (0: frames are decoded on the reading thread).
  static absl::StatusOr<std::unique_ptr<TraceImporter>> FromFd(int fd, const std::string& path,
                                                               int decode_threads = 0);
  // A trace of another format, opened by its importer (analyzer/import/open_imported.h).
  static std::unique_ptr<TraceImporter> FromImported(std::unique_ptr<ImportedTrace> imported);
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
  // Called by ReadAll with each chunk as the file holds it, before its records are converted and
  // delivered (the trace-event exports and the per-rank summaries read the records as written),
  // with the tables as they stand after the chunk.
  using ChunkObserver = std::function<void(const reader::ChunkEvents& events, const reader::InternTables& tables)>;
  void set_chunk_observer(ChunkObserver observer) { chunk_observer_ = std::move(observer); }

  // Metadata and losses (complete after ReadAll).
  const TraceInfo& info() const { return info_; }
  const TraceTables& tables() const;
  // One line when the file was cut or damaged ("" otherwise), for the report's warnings.
  std::string DamageWarning() const;
  uint64_t file_bytes() const;
  // True for a trace of another format (FromImported): there is no reader() and no chunks, and
  // observers take what they need from info(), tables() and the model records.
  bool imported() const { return imported_ != nullptr; }
  // The reader underneath: the header as written, the devices announced so far. .gstrace only
  // (not imported()).
  const reader::TraceReader& reader() const { return *reader_; }

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
  uint32_t calls_delivered_ = 0;       // ApiCall::sequence of the next call
  size_t devices_seen_ = 0;            // reader devices handed to RecordSink::OnDevice (or the header's)
  std::function<void(uint64_t)> progress_;
  ChunkObserver chunk_observer_;
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_MODEL_IMPORTER_H_
