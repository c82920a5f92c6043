#include "analyzer/reader/trace_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "proto/batch_wire.h"
#include "proto/chunk_wire.pb.h"

namespace gs::reader {

namespace pb = gpustall::trace;
using trace::FrameHeader;
using trace::FrameHeaderStatus;
using trace::kFrameHeaderSize;

// Where the bytes come from: a file descriptor, or a string in memory.
class TraceReader::Source {
 public:
  virtual ~Source() = default;
  // Reads up to `n` bytes; 0 means end of file.
  virtual absl::StatusOr<size_t> Read(unsigned char* dst, size_t n) = 0;
};

class TraceReader::FileSource : public Source {
 public:
  FileSource(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~FileSource() override { ::close(fd_); }
  absl::StatusOr<size_t> Read(unsigned char* dst, size_t n) override {
    while (true) {
      const ssize_t r = ::read(fd_, dst, n);
      if (r >= 0) return static_cast<size_t>(r);
      if (errno != EINTR) return absl::ErrnoToStatus(errno, absl::StrCat("read ", path_));
    }
  }

 private:
  int fd_;
  std::string path_;
};

class TraceReader::BufferSource : public Source {
 public:
  explicit BufferSource(std::string bytes) : bytes_(std::move(bytes)) {}
  absl::StatusOr<size_t> Read(unsigned char* dst, size_t n) override {
    const size_t k = std::min(n, bytes_.size() - pos_);
    std::memcpy(dst, bytes_.data() + pos_, k);
    pos_ += k;
    return k;
  }

 private:
  std::string bytes_;
  size_t pos_ = 0;
};

void ChunkEvents::Clear() {
  sequence = 0;
  offset = 0;
  api_calls.clear();
  activities.clear();
  memory_events.clear();
  samples.clear();
  nvtx_ranges.clear();
  host_waits.clear();
  process_stats.clear();
  clock_syncs.clear();
  graph_nodes.clear();
  has_stats = false;
  stats.Clear();
}

// ------------------------------------------------------------------------------------- opening

absl::StatusOr<std::unique_ptr<TraceReader>> TraceReader::Open(const std::string& path,
                                                               Reporter* reporter,
                                                               ReaderOptions options) {
  absl::StatusOr<int> fd = OpenFile(path);
  if (!fd.ok()) return fd.status();
  return FromFd(*fd, path, reporter, options);
}

absl::StatusOr<int> TraceReader::OpenFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, path);
  return fd;
}

absl::StatusOr<std::unique_ptr<TraceReader>> TraceReader::FromFd(int fd, const std::string& path,
                                                                 Reporter* reporter, ReaderOptions options) {
  std::unique_ptr<TraceReader> reader(new TraceReader(
      std::make_unique<FileSource>(fd, path), reporter, options, path));
  if (absl::Status s = reader->ReadPreludeAndHeader(); !s.ok()) return s;
  return reader;
}

absl::StatusOr<std::unique_ptr<TraceReader>> TraceReader::FromBuffer(std::string bytes,
                                                                     Reporter* reporter,
                                                                     std::string name,
                                                                     ReaderOptions options) {
  std::unique_ptr<TraceReader> reader(new TraceReader(
      std::make_unique<BufferSource>(std::move(bytes)), reporter, options, std::move(name)));
  if (absl::Status s = reader->ReadPreludeAndHeader(); !s.ok()) return s;
  return reader;
}

TraceReader::TraceReader(std::unique_ptr<Source> source, Reporter* reporter, ReaderOptions options,
                         std::string name)
    : source_(std::move(source)), reporter_(reporter), options_(options), name_(std::move(name)) {
  if (options_.read_block_size < 4096) options_.read_block_size = 4096;
}

TraceReader::~TraceReader() = default;

absl::Status TraceReader::ReadPreludeAndHeader() {
  if (absl::Status s = Fill(trace::kPreludeSize); !s.ok()) return s;
  if (available() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(name_, ": empty file, not a gpustall trace"));
  }
  switch (trace::CheckPrelude(&buffer_[pos_], available(), &format_version_)) {
    case trace::PreludeCheck::kOk:
      break;
    case trace::PreludeCheck::kBadMagic:
      return absl::InvalidArgumentError(absl::StrCat(name_, ": not a gpustall trace"));
    case trace::PreludeCheck::kTooShort:
      return absl::DataLossError(absl::StrCat(name_, ": truncated: the file ends after ",
                                              available(), " bytes, inside the trace prelude"));
    case trace::PreludeCheck::kNewerFormat:
      return absl::FailedPreconditionError(absl::StrCat(
          name_, ": trace format version ", format_version_,
          " is newer than this reader supports (", trace::kFormatVersion, "); upgrade gsanalyze"));
  }
  pos_ += trace::kPreludeSize;

  const auto truncated_header = [&] {
    return absl::DataLossError(absl::StrCat(name_, ": truncated: the file ends after ",
                                            offset() + available(),
                                            " bytes, inside the trace header"));
  };
  if (absl::Status s = Fill(kFrameHeaderSize); !s.ok()) return s;
  FrameHeader h;
  const FrameHeaderStatus st = trace::ParseFrameHeader(&buffer_[pos_], available(), &h);
  if (st == FrameHeaderStatus::kNeedMore) return truncated_header();
  if (st != FrameHeaderStatus::kOk) {
    return absl::DataLossError(absl::StrCat(name_, ": the trace header is damaged (",
                                            trace::FrameHeaderStatusName(st), ")"));
  }
  if (h.type != trace::FrameType::kHeader) {
    return absl::DataLossError(absl::StrCat(name_, ": the first frame is not a trace header"));
  }
  const size_t total = kFrameHeaderSize + h.stored_size;
  if (absl::Status s = Fill(total); !s.ok()) return s;
  if (available() < total) return truncated_header();
  std::string_view payload;
  std::string error;
  if (!trace::DecodePayload(h, &buffer_[pos_ + kFrameHeaderSize], &scratch_, &payload, &error) ||
      !header_.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return absl::DataLossError(absl::StrCat(name_, ": the trace header is damaged (",
                                            error.empty() ? "does not parse" : error, ")"));
  }
  if (header_.schema_version() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(name_, ": trace header has no schema version"));
  }
  if (header_.schema_version() > trace::kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        name_, ": trace schema version ", header_.schema_version(),
        " is newer than this reader supports (", trace::kSchemaVersion, "); upgrade gsanalyze"));
  }
  pos_ += total;
  capture_ = header_.capture();
  devices_.assign(header_.devices().begin(), header_.devices().end());
  stats_.file_bytes = offset();
  return absl::OkStatus();
}

// ------------------------------------------------------------------------------------- reading

absl::Status TraceReader::Fill(size_t n) {
  if (available() >= n || eof_) return absl::OkStatus();
  // Keep the unread bytes, at the front (they are fewer than n, and n is at most one frame).
  if (pos_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + pos_, available());
    buffer_offset_ += pos_;
    limit_ -= pos_;
    pos_ = 0;
  }
  // n is bounded by kFrameHeaderSize + kMaxPayloadSize: only ever a checked frame size. The
  // buffer starts small (small traces, tests that open thousands of files) and doubles up to the
  // read block size; it is only ever larger to hold one big frame.
  if (buffer_.size() < n || buffer_.size() < options_.read_block_size) {
    const size_t grown = std::min(std::max<size_t>(buffer_.size() * 2, 64 << 10),
                                  options_.read_block_size);
    buffer_.resize(std::max(n, grown));
  }
  while (limit_ < n && !eof_) {
    absl::StatusOr<size_t> r = source_->Read(buffer_.data() + limit_, buffer_.size() - limit_);
    if (!r.ok()) return r.status();
    if (*r == 0) eof_ = true;
    limit_ += *r;
  }
  return absl::OkStatus();
}

void TraceReader::Report(uint64_t at, uint64_t bytes, const std::string& why) {
  if (reporter_ != nullptr) reporter_->Corruption(at, bytes, absl::DataLossError(why));
}

// One frame on its way through the three steps (trace_reader.h: ReadFrame, DecodeFrame, Deliver).
struct TraceReader::Frame {
  // Damage met before the frame (or before the end of the file), in file order.
  struct Skip {
    uint64_t offset;
    uint64_t bytes;
    std::string why;
    bool truncated;  // the file ends inside it (else: skipped to the next frame)
  };
  struct BadBatch {
    const char* what;
    int index;
    std::string error;
  };
  std::vector<Skip> skips;
  bool last = false;                    // no frame: the end of the file, or `error`
  absl::Status error;                   // an I/O error (after the skips)
  uint64_t offset = 0;                  // the frame's file offset
  uint64_t end = 0;                     // the file offset after it
  size_t total = 0;                     // its size, header included
  FrameHeader header;
  std::string owned;                    // its stored bytes when copied off the read buffer
  const unsigned char* stored = nullptr;
  // What DecodeFrame found.
  bool damaged = false;
  std::string why;                      // (damaged)
  std::string scratch;                  // inflated payload
  // Reused: keeps its capacity across chunks. A Chunk whose API call and activity batches stay
  // bytes, decoded straight into `events` (proto/batch_wire.h).
  gpustall::trace::ChunkWire chunk;
  pb::TraceEnd trace_end;
  ChunkEvents events;                   // the chunk's records, api_class not yet resolved
  std::vector<BadBatch> bad_batches;
  bool decoded = false;                 // (parallel) DecodeFrame is done; guarded by the pool

  void Reset() {
    skips.clear();
    last = false;
    error = absl::OkStatus();
    offset = end = total = 0;
    stored = nullptr;
    damaged = false;
    why.clear();
    bad_batches.clear();
    decoded = false;
  }
};

// The decode threads: frames go in in file order, Next() waits for the oldest. absl::Mutex and
// its conditions rather than std::condition_variable: GCC 12's condition_variable::wait is a
// GLIBCXX_3.4.30 symbol, above what the wheel's manylinux tag allows for the shared libstdc++
// gsanalyze links (tools/wheel, cmake/GsPortable.cmake).
class TraceReader::DecodePool {
 public:
  explicit DecodePool(int threads) {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Run(); });
  }
  ~DecodePool() {
    {
      absl::MutexLock l(&mu_);
      stop_ = true;
    }
    for (std::thread& t : threads_) t.join();
  }
  void Submit(Frame* frame) {
    absl::MutexLock l(&mu_);
    frame->decoded = false;
    queue_.push_back(frame);
  }
  void Wait(const Frame* frame) {
    absl::MutexLock l(&mu_);
    mu_.Await(absl::Condition(&IsDecoded, frame));
  }

 private:
  static bool IsDecoded(const Frame* frame) { return frame->decoded; }
  bool HasWorkOrStop() const { return stop_ || !queue_.empty(); }

  void Run() {
    absl::MutexLock l(&mu_);
    while (true) {
      mu_.Await(absl::Condition(this, &DecodePool::HasWorkOrStop));
      if (stop_) return;
      Frame* frame = queue_.front();
      queue_.pop_front();
      mu_.Unlock();
      DecodeFrame(frame);
      mu_.Lock();
      frame->decoded = true;
    }
  }

  absl::Mutex mu_;
  std::deque<Frame*> queue_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

absl::Status TraceReader::Resynchronize(const char* why, Frame* frame) {
  const uint64_t start = offset();
  ++pos_;  // there is no frame here
  while (true) {
    if (absl::Status s = Fill(kFrameHeaderSize); !s.ok()) return s;
    if (available() == 0) break;
    pos_ += trace::FindFrameMarker(&buffer_[pos_], available());
    if (available() == 0) continue;  // nothing in this buffer; read on
    if (absl::Status s = Fill(kFrameHeaderSize); !s.ok()) return s;
    FrameHeader h;
    const FrameHeaderStatus st = trace::ParseFrameHeader(&buffer_[pos_], available(), &h);
    // kNeedMore here means the file ends inside a header: the main loop reports the truncation.
    if (st == FrameHeaderStatus::kOk || st == FrameHeaderStatus::kNeedMore) break;
    ++pos_;
  }
  const uint64_t skipped = offset() - start;
  frame->skips.push_back({start, skipped,
                          absl::StrCat("damaged data at offset ", start, " (", why, "): skipped ",
                                       skipped, " bytes to the next frame"),
                          false});
  return absl::OkStatus();
}

absl::Status TraceReader::ReadFrame(Frame* frame, bool copy) {
  frame->Reset();
  const auto last = [&](absl::Status error) {
    frame->last = true;
    frame->error = std::move(error);
    frame->end = offset();
    return absl::OkStatus();
  };
  while (true) {
    if (absl::Status s = Fill(kFrameHeaderSize); !s.ok()) return last(s);
    if (available() == 0) return last(absl::OkStatus());
    const uint64_t frame_offset = offset();
    FrameHeader h;
    const FrameHeaderStatus st = trace::ParseFrameHeader(&buffer_[pos_], available(), &h);
    if (st == FrameHeaderStatus::kNeedMore) {
      MarkTruncated(frame_offset, available(), "a frame header", frame);
      return last(absl::OkStatus());
    }
    if (st != FrameHeaderStatus::kOk) {
      if (absl::Status s = Resynchronize(trace::FrameHeaderStatusName(st), frame); !s.ok()) return last(s);
      continue;
    }
    const size_t total = kFrameHeaderSize + h.stored_size;
    if (absl::Status s = Fill(total); !s.ok()) return last(s);
    if (available() < total) {
      MarkTruncated(frame_offset, available(), "a frame", frame);
      return last(absl::OkStatus());
    }
    frame->offset = frame_offset;
    frame->total = total;
    frame->header = h;
    frame->stored = &buffer_[pos_ + kFrameHeaderSize];
    if (copy) {  // the read buffer moves on before a decode thread gets to it
      frame->owned.assign(reinterpret_cast<const char*>(frame->stored), h.stored_size);
      frame->stored = reinterpret_cast<const unsigned char*>(frame->owned.data());
    }
    pos_ += total;
    frame->end = offset();
    return absl::OkStatus();
  }
}

void TraceReader::DecodeFrame(Frame* frame) {
  std::string_view payload;
  std::string error;
  if (!trace::DecodePayload(frame->header, frame->stored, &frame->scratch, &payload, &error)) {
    frame->damaged = true;
    frame->why = std::move(error);
    return;
  }
  const int size = static_cast<int>(payload.size());
  switch (frame->header.type) {
    case trace::FrameType::kChunk:
      break;
    case trace::FrameType::kEnd:
      if (!frame->trace_end.ParseFromArray(payload.data(), size)) {
        frame->damaged = true;
        frame->why = "the end record does not parse";
      }
      return;
    case trace::FrameType::kHeader:
      frame->damaged = true;
      frame->why = "a second trace header";
      return;
    default:
      return;
  }
  const gpustall::trace::ChunkWire& chunk = frame->chunk;
  constexpr const char* kDoesNotParse = "the chunk does not parse";
  if (!frame->chunk.ParseFromArray(payload.data(), size)) {
    frame->damaged = true;
    frame->why = kDoesNotParse;
    return;
  }
  ChunkEvents* events = &frame->events;
  events->Clear();
  const auto bad_batch = [&](const char* what, int index) {
    frame->bad_batches.push_back({what, index, error});
  };
  // A batch whose bytes protobuf would not parse fails the whole chunk, as parsing it as a Chunk
  // would have (nothing of the frame is applied).
  const auto decoded = [&](trace::WireBatchResult result, const char* what, int index) {
    if (result == trace::WireBatchResult::kBadBatch) bad_batch(what, index);
    if (result != trace::WireBatchResult::kMalformed) return true;
    frame->damaged = true;
    frame->why = kDoesNotParse;
    return false;
  };
  for (int i = 0; i < chunk.api_calls_size(); ++i) {
    if (!decoded(trace::DecodeApiCallBatchWire(chunk.api_calls(i), &events->api_calls, &error), "API call", i))
      return;
  }
  for (int i = 0; i < chunk.activities_size(); ++i) {
    if (!decoded(trace::DecodeGpuActivityBatchWire(chunk.activities(i), &events->activities, &error),
                 "GPU activity", i))
      return;
  }
  for (int i = 0; i < chunk.memory_events_size(); ++i) {
    if (!trace::DecodeMemoryEventBatch(chunk.memory_events(i), &events->memory_events, &error)) {
      bad_batch("memory event", i);
    }
  }
  for (int i = 0; i < chunk.samples_size(); ++i) {
    if (!trace::DecodeSampleBatch(chunk.samples(i), &events->samples, &error)) bad_batch("sample", i);
  }
  for (int i = 0; i < chunk.nvtx_ranges_size(); ++i) {
    if (!trace::DecodeNvtxRangeBatch(chunk.nvtx_ranges(i), &events->nvtx_ranges, &error)) {
      bad_batch("NVTX range", i);
    }
  }
  for (int i = 0; i < chunk.host_waits_size(); ++i) {
    if (!trace::DecodeHostWaitBatch(chunk.host_waits(i), &events->host_waits, &error)) {
      bad_batch("host wait", i);
    }
  }
}

absl::StatusOr<bool> TraceReader::Deliver(Frame* frame, ChunkEvents* events) {
  for (const Frame::Skip& k : frame->skips) {
    if (k.truncated) {
      stats_.truncated_at = k.offset;
      stats_.truncated_bytes = k.bytes;
    } else {
      stats_.skipped_bytes += k.bytes;
      ++corrupt_since_chunk_;
    }
    Report(k.offset, k.bytes, k.why);
  }
  if (frame->last) {
    if (!frame->error.ok()) return frame->error;
    stats_.file_bytes = frame->end;
    return false;
  }
  stats_.file_bytes = frame->end;
  if (frame->damaged) {
    ++stats_.corrupt_frames;
    ++corrupt_since_chunk_;
    stats_.skipped_bytes += frame->total;
    Report(frame->offset, frame->total,
           absl::StrCat("damaged frame at offset ", frame->offset, " (", frame->total, " bytes): ", frame->why));
    return false;
  }
  switch (frame->header.type) {
    case trace::FrameType::kChunk:
      ApplyChunk(frame, events);
      return true;
    case trace::FrameType::kEnd:
      end_.Swap(&frame->trace_end);
      stats_.clean_end = true;
      if (end_.has_stats()) last_stats_ = end_.stats();
      return false;
    default:
      return false;
  }
}

absl::StatusOr<bool> TraceReader::Next(ChunkEvents* events) {
  events->Clear();
  if (options_.decode_threads > 0) return NextParallel(events);
  if (frame_ == nullptr) frame_ = std::make_unique<Frame>();
  while (true) {
    Frame* frame = frame_.get();
    if (absl::Status s = ReadFrame(frame, /*copy=*/false); !s.ok()) return s;
    if (!frame->last) DecodeFrame(frame);
    absl::StatusOr<bool> chunk = Deliver(frame, events);
    if (!chunk.ok() || *chunk || frame->last) return chunk;
  }
}

absl::StatusOr<bool> TraceReader::NextParallel(ChunkEvents* events) {
  if (pool_ == nullptr) pool_ = std::make_unique<DecodePool>(options_.decode_threads);
  const size_t ahead = 2 * static_cast<size_t>(options_.decode_threads) + 1;
  while (true) {
    while (!input_done_ && in_flight_.size() < ahead) {
      std::unique_ptr<Frame> frame;
      if (spare_.empty()) {
        frame = std::make_unique<Frame>();
      } else {
        frame = std::move(spare_.back());
        spare_.pop_back();
      }
      if (absl::Status s = ReadFrame(frame.get(), /*copy=*/true); !s.ok()) return s;
      if (frame->last) {
        input_done_ = true;
      } else {
        pool_->Submit(frame.get());
      }
      in_flight_.push_back(std::move(frame));
    }
    if (in_flight_.empty()) return false;  // the end was delivered already
    Frame* frame = in_flight_.front().get();
    if (!frame->last) pool_->Wait(frame);
    absl::StatusOr<bool> chunk = Deliver(frame, events);
    const bool last = frame->last;
    spare_.push_back(std::move(in_flight_.front()));
    in_flight_.pop_front();
    if (!chunk.ok() || *chunk || last) return chunk;
  }
}

void TraceReader::MarkTruncated(uint64_t at, uint64_t bytes, const char* inside, Frame* frame) {
  pos_ = limit_;
  frame->skips.push_back({at, bytes,
                          absl::StrCat("truncated: the file ends inside ", inside, " at offset ", at,
                                       "; ", bytes, " bytes of it ignored"),
                          true});
}

void TraceReader::ApplyChunk(Frame* frame, ChunkEvents* events) {
  const gpustall::trace::ChunkWire& chunk = frame->chunk;
  const uint64_t frame_offset = frame->offset;
  // The decoded records become the caller's; the caller's emptied vectors stay for reuse.
  std::swap(events->api_calls, frame->events.api_calls);
  std::swap(events->activities, frame->events.activities);
  std::swap(events->memory_events, frame->events.memory_events);
  std::swap(events->samples, frame->events.samples);
  std::swap(events->nvtx_ranges, frame->events.nvtx_ranges);
  std::swap(events->host_waits, frame->events.host_waits);
  ++stats_.chunks;
  events->sequence = chunk.sequence();
  events->offset = frame_offset;
  if (chunk.sequence() > next_sequence_) {
    const uint64_t gap = chunk.sequence() - next_sequence_;
    stats_.missing_chunks += gap;
    // Chunks lost to damage were reported already; report only those that never reached the file.
    if (gap > corrupt_since_chunk_) {
      Report(frame_offset, 0,
             absl::StrCat(gap - corrupt_since_chunk_, " chunk(s) missing before chunk ",
                          chunk.sequence(), " at offset ", frame_offset));
    }
  }
  if (chunk.sequence() >= next_sequence_) next_sequence_ = chunk.sequence() + 1;
  corrupt_since_chunk_ = 0;

  // Definitions first: the records below may refer to them.
  for (const pb::InternedString& s : chunk.strings()) tables_.AddString(s.id(), s.value());
  for (const pb::ApiFunction& f : chunk.api_functions()) tables_.AddFunction(f);
  for (const pb::Module& m : chunk.modules()) tables_.AddModule(m);
  for (const pb::Frame& f : chunk.frames()) tables_.AddFrame(f);
  for (const pb::Stack& s : chunk.stacks()) tables_.AddStack(s);
  for (const pb::ThreadInfo& t : chunk.threads()) tables_.AddThread(t);
  for (const pb::LaunchConfig& c : chunk.launch_configs()) tables_.AddLaunchConfig(c);
  for (const pb::DeviceInfo& d : chunk.devices()) {
    auto it = std::find_if(devices_.begin(), devices_.end(),
                           [&](const pb::DeviceInfo& e) { return e.index() == d.index(); });
    if (it != devices_.end()) {
      *it = d;
    } else {
      devices_.push_back(d);
    }
  }
  if (chunk.has_capture()) capture_ = chunk.capture();
  if (chunk.has_stats()) {
    last_stats_ = chunk.stats();
    events->stats = chunk.stats();
    events->has_stats = true;
  }
  events->process_stats.assign(chunk.process_stats().begin(), chunk.process_stats().end());
  events->clock_syncs.assign(chunk.clock_syncs().begin(), chunk.clock_syncs().end());
  events->graph_nodes.assign(chunk.graph_nodes().begin(), chunk.graph_nodes().end());

  for (const Frame::BadBatch& b : frame->bad_batches) {
    ++stats_.bad_batches;
    Report(frame_offset, 0,
           absl::StrCat("chunk ", chunk.sequence(), " at offset ", frame_offset, ": ", b.what,
                        " batch ", b.index, " dropped: ", b.error));
  }
  // The class belongs to the function; resolve it once per record here, with this chunk's
  // definitions in, so the analysis does not have to (consecutive calls mostly repeat a
  // function: cache the last lookup).
  uint32_t last_function = 0;
  pb::ApiClass last_class = pb::API_CLASS_OTHER;
  for (trace::ApiCallRecord& r : events->api_calls) {
    if (r.function != last_function) {
      last_function = r.function;
      last_class = tables_.function_class(r.function);
    }
    r.api_class = last_class;
  }
  stats_.api_calls += events->api_calls.size();
  stats_.activities += events->activities.size();
  stats_.memory_events += events->memory_events.size();
  stats_.samples += events->samples.size();
  stats_.nvtx_ranges += events->nvtx_ranges.size();
  stats_.host_waits += events->host_waits.size();
}

}  // namespace gs::reader
