// trace_reader.h — streaming reader of .gstrace files (proto/FORMAT.md).
//
//   gs::reader::CollectingReporter damage;             // or your own Reporter
//   auto reader = gs::reader::TraceReader::Open(path, &damage);
//   if (!reader.ok()) return reader.status();          // not a trace / newer version / truncated header
//   gs::reader::ChunkEvents events;
//   while (true) {
//     absl::StatusOr<bool> more = (*reader)->Next(&events);
//     if (!more.ok()) return more.status();            // I/O error only
//     if (!*more) break;                               // end of file
//     for (const gs::trace::ApiCallRecord& call : events.api_calls) { ... }
//     ... (*reader)->tables().DescribeStack(call.stack) ...
//   }
//   (*reader)->stats().truncated_bytes ...             // what was lost (also told to the Reporter)
//
// Open() validates the prelude and the header: a file that is not a trace, a trace of a newer
// format or schema version than this reader, or a file cut before its header is complete is an
// error (absl::Status, one clear line). After that the reader never fails on damage: it reports
// each damaged region to the Reporter (byte offset, bytes lost, why) and continues with the next
// good frame, like leveldb's log::Reader. A file cut at any byte yields every complete chunk.
//
// Memory: one read buffer (1 MiB normally, at most one frame of up to 64 MiB), the last chunk's
// decoded records, and the interned tables (which grow with distinct strings/frames/stacks, not
// with events). Nothing is sized by an unchecked length or count from the file.
//
// Thread safety: none; one thread uses a reader. The Reporter is called on that thread, from
// Next(), and must outlive the reader. With ReaderOptions::decode_threads > 0 the reader runs
// that many threads of its own, which only decode frames (checksum, inflate, protobuf parse,
// batch decode); everything with state (tables, sequence checks, stats, damage reports) stays
// on the caller's thread, in file order, so what Next() hands out and reports is the same.
#ifndef GPUSTALL_ANALYZER_READER_TRACE_READER_H_
#define GPUSTALL_ANALYZER_READER_TRACE_READER_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analyzer/reader/intern_tables.h"
#include "proto/batch_codec.h"
#include "proto/framing.h"
#include "proto/gstrace.pb.h"
#include "proto/records.h"

namespace gs::reader {

// Told about every damaged region. `offset`: file offset where it starts; `bytes`: bytes of the
// file that were dropped because of it (0 when nothing was skipped, e.g. one bad batch inside a
// good chunk, or a gap in chunk sequence numbers). `reason` is DataLoss with a message.
class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void Corruption(uint64_t offset, uint64_t bytes, const absl::Status& reason) = 0;
};

// Keeps the damage it is told about (tests, gsanalyze's "data loss" line).
class CollectingReporter : public Reporter {
 public:
  struct Damage {
    uint64_t offset;
    uint64_t bytes;
    absl::Status reason;
  };
  void Corruption(uint64_t offset, uint64_t bytes, const absl::Status& reason) override {
    damage.push_back({offset, bytes, reason});
  }
  std::vector<Damage> damage;
};

// What the reader has seen so far (complete after Next() returned false).
struct ReadStats {
  uint64_t file_bytes = 0;          // bytes consumed (the file size once at the end)
  uint64_t chunks = 0;              // chunk frames decoded
  uint64_t api_calls = 0;           // records handed out
  uint64_t activities = 0;
  uint64_t memory_events = 0;
  uint64_t samples = 0;
  uint64_t host_waits = 0;
  uint64_t nvtx_ranges = 0;
  uint64_t corrupt_frames = 0;      // frames skipped: bad checksum, undecodable payload
  uint64_t skipped_bytes = 0;       // bytes skipped for damage (incl. garbage between frames)
  uint64_t bad_batches = 0;         // batches dropped inside otherwise good chunks
  uint64_t missing_chunks = 0;      // gaps in Chunk.sequence
  uint64_t truncated_bytes = 0;     // bytes of a partial frame at the end of the file
  uint64_t truncated_at = 0;        // its offset (valid when truncated_bytes > 0)
  bool clean_end = false;           // a TraceEnd frame was read
};

// The records of one chunk, decoded (absolute CLOCK_MONOTONIC timestamps; ids resolve through
// TraceReader::tables()). Records are in file order, which is not necessarily time order.
struct ChunkEvents {
  uint64_t sequence = 0;
  uint64_t offset = 0;              // file offset of the chunk's frame
  // (Vectors whose resize leaves records unwritten, batch_codec.h: a std::vector's interface.)
  trace::ApiCallRecords api_calls;   // api_class filled from the function table
  trace::GpuActivityRecords activities;
  std::vector<trace::MemoryEventRecord> memory_events;
  std::vector<trace::SampleRecord> samples;
  std::vector<trace::NvtxRangeRecord> nvtx_ranges;
  std::vector<trace::HostWaitRecord> host_waits;
  std::vector<gpustall::trace::ProcessStats> process_stats;
  std::vector<gpustall::trace::ClockSync> clock_syncs;
  std::vector<gpustall::trace::GraphNode> graph_nodes;  // capture-time graph nodes (gstrace.proto)
  bool has_stats = false;           // the chunk carried a Stats (also in TraceReader::last_stats)
  gpustall::trace::Stats stats;
  // Clears the records, keeping capacity.
  void Clear();
  size_t num_records() const {
    return api_calls.size() + activities.size() + memory_events.size() + samples.size() +
           nvtx_ranges.size() + host_waits.size();
  }
};

struct ReaderOptions {
  size_t read_block_size = 1 << 20;  // bytes per read() call
  // Threads that decode frames ahead of Next() (0: Next() decodes each frame itself). At most
  // 2 frames per thread are read ahead, so memory stays bounded by frames, not by the file.
  int decode_threads = 0;
};

class TraceReader {
 public:
  // Opens `path` and reads its prelude and header. Errors: NotFound/PermissionDenied (cannot
  // open), InvalidArgument (not a gpustall trace), FailedPrecondition (newer format or schema
  // version), DataLoss (truncated or damaged before the header was complete).
  // `reporter` may be null (damage is then only counted in stats()).
  static absl::StatusOr<std::unique_ptr<TraceReader>> Open(const std::string& path,
                                                           Reporter* reporter = nullptr,
                                                           ReaderOptions options = {});
  // Open() in two steps, for a caller that looks at a file's first bytes before it knows its
  // format (the one pass opens each file once, analysis/trace_file.h): OpenFile opens a file for
  // reading (O_RDONLY | O_CLOEXEC); FromFd reads a .gstrace over an open descriptor (owned from
  // then on, even on error; its offset still 0).
  static absl::StatusOr<int> OpenFile(const std::string& path);
  static absl::StatusOr<std::unique_ptr<TraceReader>> FromFd(int fd, const std::string& path,
                                                             Reporter* reporter = nullptr,
                                                             ReaderOptions options = {});
  // The same over bytes in memory (tests, fuzzers). `name` appears in error messages.
  static absl::StatusOr<std::unique_ptr<TraceReader>> FromBuffer(std::string bytes,
                                                                 Reporter* reporter = nullptr,
                                                                 std::string name = "<buffer>",
                                                                 ReaderOptions options = {});
  ~TraceReader();

  // Decodes the next chunk into *events (cleared first) and applies its tables. Returns true if
  // a chunk was read, false at the end of the file; an error only for I/O failure.
  absl::StatusOr<bool> Next(ChunkEvents* events);

  const gpustall::trace::TraceHeader& header() const { return header_; }
  uint32_t format_version() const { return format_version_; }
  // The capture info in force: the header's, or the latest Chunk.capture.
  const gpustall::trace::CaptureInfo& capture() const { return capture_; }
  // Devices from the header and chunks, in order of appearance (a later entry for the same
  // index replaces the earlier one).
  const std::vector<gpustall::trace::DeviceInfo>& devices() const { return devices_; }
  const InternTables& tables() const { return tables_; }
  // The last cumulative Stats seen (TraceEnd's at the end of a clean trace).
  const gpustall::trace::Stats& last_stats() const { return last_stats_; }
  // The TraceEnd record, or nullptr if none was read (yet).
  const gpustall::trace::TraceEnd* end() const { return stats_.clean_end ? &end_ : nullptr; }
  const ReadStats& stats() const { return stats_; }
  const std::string& name() const { return name_; }

 private:
  class Source;
  class FileSource;
  class BufferSource;
  struct Frame;
  class DecodePool;

  TraceReader(std::unique_ptr<Source> source, Reporter* reporter, ReaderOptions options,
              std::string name);
  absl::Status ReadPreludeAndHeader();
  // Makes at least `n` bytes available from pos_ (fewer only at end of file). I/O errors: status.
  absl::Status Fill(size_t n);
  size_t available() const { return limit_ - pos_; }
  uint64_t offset() const { return buffer_offset_ + pos_; }
  void Report(uint64_t offset, uint64_t bytes, const std::string& why);
  // Reading a frame is three steps: ReadFrame (framing: the next frame's bytes, and the damage
  // skipped before it), DecodeFrame (pure: checksum, inflate, parse, batch decode; may run on a
  // decode thread) and Deliver (in file order: damage reports, tables, stats). Deliver returns
  // true when the frame was a chunk (its records are then in *events), an error for I/O.
  absl::Status ReadFrame(Frame* frame, bool copy);
  static void DecodeFrame(Frame* frame);
  absl::StatusOr<bool> Deliver(Frame* frame, ChunkEvents* events);
  absl::StatusOr<bool> NextParallel(ChunkEvents* events);
  // Skips forward to the next position that holds a valid frame header (or the end); the skip
  // is noted in `frame`, reported when it is delivered.
  absl::Status Resynchronize(const char* why, Frame* frame);
  // The file ends inside a frame at `at`; `bytes` of it are present. Consumes them (noted in
  // `frame`, reported when it is delivered).
  void MarkTruncated(uint64_t at, uint64_t bytes, const char* inside, Frame* frame);
  void ApplyChunk(Frame* frame, ChunkEvents* events);

  std::unique_ptr<Source> source_;
  Reporter* reporter_;
  ReaderOptions options_;
  std::string name_;
  std::vector<unsigned char> buffer_;
  size_t pos_ = 0, limit_ = 0;    // unread bytes: buffer_[pos_, limit_)
  uint64_t buffer_offset_ = 0;     // file offset of buffer_[0]
  bool eof_ = false;
  uint32_t format_version_ = 0;
  uint64_t next_sequence_ = 0;
  uint64_t corrupt_since_chunk_ = 0;  // damage reports since the last good chunk
  std::string scratch_;            // the header's inflated payload
  gpustall::trace::TraceHeader header_;
  gpustall::trace::CaptureInfo capture_;
  std::vector<gpustall::trace::DeviceInfo> devices_;
  gpustall::trace::Stats last_stats_;
  gpustall::trace::TraceEnd end_;
  InternTables tables_;
  ReadStats stats_;
  // Serial reading reuses one frame; parallel reading keeps frames in flight, in file order.
  std::unique_ptr<Frame> frame_;
  std::deque<std::unique_ptr<Frame>> in_flight_;
  std::vector<std::unique_ptr<Frame>> spare_;
  bool input_done_ = false;        // the last frame (end of file or I/O error) was read
  std::unique_ptr<DecodePool> pool_;  // last: its threads stop before the frames go
};

}  // namespace gs::reader

#endif  // GPUSTALL_ANALYZER_READER_TRACE_READER_H_
