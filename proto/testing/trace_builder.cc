#include "proto/testing/trace_builder.h"

#include <cerrno>
#include <cstring>
#include <functional>

#include "proto/framing.h"

namespace gs::trace::testing {

namespace pb = gpustall::trace;

std::unique_ptr<TraceBuilder> TraceBuilder::Create(const std::string& path, pb::TraceHeader header,
                                                   Options options, std::string* error) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) {
    if (error != nullptr) *error = path + ": " + std::strerror(errno);
    return nullptr;
  }
  std::unique_ptr<TraceBuilder> builder(new TraceBuilder(file, options));
  unsigned char prelude[kPreludeSize];
  EncodePrelude(prelude);
  if (header.schema_version() == 0) header.set_schema_version(kSchemaVersion);
  const bool ok = std::fwrite(prelude, 1, sizeof(prelude), file) == sizeof(prelude) &&
                  (builder->bytes_written_ = sizeof(prelude),
                   builder->WriteFrame(FrameType::kHeader, header.SerializeAsString()));
  if (!ok) {
    if (error != nullptr) *error = path + ": write failed";
    builder->failed_ = true;
    return nullptr;
  }
  return builder;
}

TraceBuilder::TraceBuilder(std::FILE* file, Options options) : file_(file), options_(options) {
  // Large stdio buffer: the builder writes big frames, and benchmarks write gigabytes.
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
  if (options_.records_per_chunk == 0) options_.records_per_chunk = 1;
}

TraceBuilder::~TraceBuilder() {
  if (!closed_) Close(!failed_, pb::END_REASON_EXIT);
}

bool TraceBuilder::WriteFrame(FrameType type, const std::string& payload) {
  size_t size;
  if (options_.zstd_level > 0) {
    if (zstd_ == nullptr) zstd_ = std::make_unique<ZstdFrameEncoder>(options_.zstd_level);
    frame_.resize(MaxCompressedFrameSize(payload.size()));
    size = zstd_->Encode(type, payload.data(), payload.size(), frame_.data(), frame_.size());
  } else if (options_.deflate_level > 0) {
    frame_.resize(MaxCompressedFrameSize(payload.size()));
    size = EncodeCompressedFrame(type, payload.data(), payload.size(), options_.deflate_level,
                                 frame_.data(), frame_.size());
  } else {
    frame_.resize(kFrameHeaderSize + payload.size());
    size = EncodeFrame(type, payload.data(), payload.size(), frame_.data(), frame_.size());
  }
  if (size == 0 || std::fwrite(frame_.data(), 1, size, file_) != size) {
    failed_ = true;
    return false;
  }
  frame_offsets_.push_back(bytes_written_);
  bytes_written_ += size;
  return true;
}

// ---------------------------------------------------------------------------- interned tables

uint32_t TraceBuilder::InternString(std::string_view value) {
  if (value.empty()) return 0;
  auto [it, inserted] =
      strings_.emplace(std::string(value), static_cast<uint32_t>(strings_.size() + 1));
  if (inserted) {
    pb::InternedString* s = chunk_.add_strings();
    s->set_id(it->second);
    s->set_value(it->first);
  }
  return it->second;
}

uint32_t TraceBuilder::AddModule(std::string_view path, std::string_view build_id,
                                 uint64_t load_address, uint64_t size) {
  const std::string key = std::string(path) + '\0' + std::to_string(load_address);
  auto [it, inserted] = modules_.emplace(key, static_cast<uint32_t>(modules_.size() + 1));
  if (inserted) {
    pb::Module* m = chunk_.add_modules();
    m->set_id(it->second);
    m->set_path(std::string(path));
    m->set_build_id(std::string(build_id));
    m->set_load_address(load_address);
    m->set_size(size);
  }
  return it->second;
}

uint32_t TraceBuilder::InternFrame(uint32_t module_id, uint64_t rel_pc) {
  return InternSymbolizedFrame(module_id, rel_pc, "", "", 0);
}

uint32_t TraceBuilder::InternSymbolizedFrame(uint32_t module_id, uint64_t rel_pc,
                                             std::string_view function, std::string_view file,
                                             uint32_t line) {
  const uint32_t function_id = InternString(function);
  const uint32_t file_id = InternString(file);
  const auto key = std::make_tuple(module_id, rel_pc, function_id, file_id, line,
                                   static_cast<int>(pb::FRAME_KIND_NATIVE));
  auto [it, inserted] = frames_.emplace(key, next_frame_id_);
  if (inserted) {
    ++next_frame_id_;
    pb::Frame* f = chunk_.add_frames();
    f->set_id(it->second);
    f->set_module_id(module_id);
    f->set_rel_pc(rel_pc);
    f->set_function_id(function_id);
    f->set_file_id(file_id);
    f->set_line(line);
  }
  return it->second;
}

uint32_t TraceBuilder::InternPythonFrame(std::string_view function, std::string_view file,
                                         uint32_t line) {
  const uint32_t function_id = InternString(function);
  const uint32_t file_id = InternString(file);
  const auto key = std::make_tuple(0u, uint64_t{0}, function_id, file_id, line,
                                   static_cast<int>(pb::FRAME_KIND_PYTHON));
  auto [it, inserted] = frames_.emplace(key, next_frame_id_);
  if (inserted) {
    ++next_frame_id_;
    pb::Frame* f = chunk_.add_frames();
    f->set_id(it->second);
    f->set_kind(pb::FRAME_KIND_PYTHON);
    f->set_function_id(function_id);
    f->set_file_id(file_id);
    f->set_line(line);
  }
  return it->second;
}

void TraceBuilder::SymbolizeFrame(uint32_t frame_id, std::string_view function,
                                  std::string_view file, uint32_t line) {
  pb::Frame* f = chunk_.add_frames();
  f->set_id(frame_id);
  f->set_function_id(InternString(function));
  f->set_file_id(InternString(file));
  f->set_line(line);
}

uint32_t TraceBuilder::InternStack(const std::vector<uint32_t>& frame_ids, bool truncated) {
  auto [it, inserted] = stacks_.emplace(std::make_pair(frame_ids, truncated),
                                        static_cast<uint32_t>(stacks_.size() + 1));
  if (inserted) {
    pb::Stack* s = chunk_.add_stacks();
    s->set_id(it->second);
    for (uint32_t id : frame_ids) s->add_frame_ids(id);
    s->set_truncated(truncated);
  }
  return it->second;
}

uint32_t TraceBuilder::InternStackOfFunctions(const std::vector<std::string>& functions) {
  const uint32_t module = AddModule("test", "", 0x400000, 1 << 20);
  std::vector<uint32_t> frames;
  frames.reserve(functions.size());
  for (const std::string& spec : functions) {
    std::string_view function = spec, file;
    uint32_t line = 0;
    if (const size_t at = spec.find('@'); at != std::string::npos) {
      function = std::string_view(spec).substr(0, at);
      file = std::string_view(spec).substr(at + 1);
      if (const size_t colon = file.rfind(':'); colon != std::string_view::npos) {
        line = static_cast<uint32_t>(std::strtoul(std::string(file.substr(colon + 1)).c_str(),
                                                  nullptr, 10));
        file = file.substr(0, colon);
      }
    }
    // A stable, distinct pc per function name, inside the module.
    const uint64_t pc = 0x1000 + (std::hash<std::string_view>()(function) & 0xfffff);
    frames.push_back(InternSymbolizedFrame(module, pc, function, file, line));
  }
  return InternStack(frames);
}

uint32_t TraceBuilder::InternApiFunction(std::string_view name, pb::ApiClass api_class,
                                         pb::ApiSource source, uint32_t raw_id) {
  auto [it, inserted] =
      functions_.emplace(std::make_pair(std::string(name), static_cast<int>(source)),
                         static_cast<uint32_t>(functions_.size() + 1));
  if (inserted) {
    pb::ApiFunction* f = chunk_.add_api_functions();
    f->set_id(it->second);
    f->set_name(std::string(name));
    f->set_api_class(api_class);
    f->set_source(source);
    f->set_raw_id(raw_id);
  }
  return it->second;
}

void TraceBuilder::AddThread(uint64_t tid, std::string_view name, bool is_main) {
  pb::ThreadInfo* t = chunk_.add_threads();
  t->set_tid(tid);
  t->set_name(std::string(name));
  t->set_is_main(is_main);
}

void TraceBuilder::AddDevice(const pb::DeviceInfo& device) { *chunk_.add_devices() = device; }
void TraceBuilder::AddLaunchConfig(const pb::LaunchConfig& config) { *chunk_.add_launch_configs() = config; }

// ------------------------------------------------------------------------------------- records

namespace {

// The encoder of `tid` in the current chunk, starting a batch for it on first use.
template <typename PerThreadVector, typename AddBatch>
auto& EncoderFor(PerThreadVector& encoders, uint64_t tid, uint64_t base_ns, AddBatch add_batch) {
  for (auto& e : encoders) {
    if (e.tid == tid) return e.encoder;
  }
  encoders.emplace_back();
  encoders.back().tid = tid;
  encoders.back().encoder.Begin(add_batch(), tid, base_ns);
  return encoders.back().encoder;
}

}  // namespace

void TraceBuilder::RecordAdded() {
  ++records_added_;
  if (++records_in_chunk_ >= options_.records_per_chunk) FlushChunk();
}

void TraceBuilder::AddApiCall(const ApiCallRecord& r) {
  EncoderFor(api_calls_, r.thread_id, r.enter_ns, [this] { return chunk_.add_api_calls(); }).Add(r);
  ++pending_api_calls_;
  RecordAdded();
}

void TraceBuilder::AddActivity(const GpuActivityRecord& r) {
  if (!have_activities_) {
    activities_.Begin(chunk_.add_activities(), r.start_ns);
    have_activities_ = true;
  }
  activities_.Add(r);
  ++pending_activities_;
  RecordAdded();
}

void TraceBuilder::AddMemoryEvent(const MemoryEventRecord& r) {
  if (!have_memory_) {
    memory_.Begin(chunk_.add_memory_events(), r.time_ns);
    have_memory_ = true;
  }
  memory_.Add(r);
  RecordAdded();
}

void TraceBuilder::AddSample(const SampleRecord& r) {
  EncoderFor(samples_, r.thread_id, r.time_ns, [this] { return chunk_.add_samples(); }).Add(r);
  ++pending_samples_;
  RecordAdded();
}

void TraceBuilder::AddNvtxRange(const NvtxRangeRecord& r) {
  EncoderFor(nvtx_, r.thread_id, r.start_ns, [this] { return chunk_.add_nvtx_ranges(); }).Add(r);
  RecordAdded();
}

void TraceBuilder::AddHostWait(const HostWaitRecord& r) {
  EncoderFor(host_waits_, r.thread_id, r.start_ns, [this] { return chunk_.add_host_waits(); }).Add(r);
  RecordAdded();
}

void TraceBuilder::SetStats(const pb::Stats& stats) {
  *chunk_.mutable_stats() = stats;
  user_stats_ = true;
}

void TraceBuilder::AddProcessStats(const pb::ProcessStats& stats) {
  *chunk_.add_process_stats() = stats;
}

void TraceBuilder::AddClockSync(const pb::ClockSync& sync) { *chunk_.add_clock_syncs() = sync; }

void TraceBuilder::SetCapture(const pb::CaptureInfo& capture) {
  *chunk_.mutable_capture() = capture;
}

bool TraceBuilder::FlushChunk() {
  if (closed_ || failed_) return false;
  // (ByteSizeLong walks the whole chunk: only ask when there are no records, i.e. rarely.)
  if (records_in_chunk_ == 0 && chunk_.ByteSizeLong() == 0) return true;
  api_calls_written_ += pending_api_calls_;
  activities_written_ += pending_activities_;
  samples_written_ += pending_samples_;
  records_written_ += records_in_chunk_;
  if (options_.auto_stats && !user_stats_) {
    pb::Stats* s = chunk_.mutable_stats();
    s->set_api_calls_recorded(api_calls_written_);
    s->set_activities_recorded(activities_written_);
    s->set_samples_recorded(samples_written_);
    s->set_bytes_written(bytes_written_);
    s->set_chunks_written(chunks_written_);
  }
  chunk_.set_sequence(chunks_written_);
  payload_.resize(chunk_.ByteSizeLong());
  chunk_.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(payload_.data()));
  const bool ok = WriteFrame(FrameType::kChunk, payload_);
  ++chunks_written_;
  // Clear() keeps the repeated fields' storage, so steady-state chunks do not reallocate.
  chunk_.Clear();
  api_calls_.clear();
  samples_.clear();
  nvtx_.clear();
  host_waits_.clear();
  have_activities_ = have_memory_ = false;
  records_in_chunk_ = 0;
  pending_api_calls_ = pending_activities_ = pending_samples_ = 0;
  user_stats_ = false;
  return ok;
}

bool TraceBuilder::Close(bool write_end, pb::EndReason reason) {
  if (closed_) return !failed_;
  bool ok = FlushChunk();
  if (write_end && ok) {
    pb::TraceEnd end;
    end.set_reason(reason);
    end.set_chunk_count(chunks_written_);
    pb::Stats* s = end.mutable_stats();
    s->set_api_calls_recorded(api_calls_written_);
    s->set_activities_recorded(activities_written_);
    s->set_samples_recorded(samples_written_);
    s->set_bytes_written(bytes_written_);
    s->set_chunks_written(chunks_written_);
    ok = WriteFrame(FrameType::kEnd, end.SerializeAsString());
  }
  closed_ = true;
  if (std::fclose(file_) != 0) ok = false;
  file_ = nullptr;
  return ok && !failed_;
}

bool TraceBuilder::Finish(pb::EndReason reason) { return Close(true, reason); }

bool TraceBuilder::CloseWithoutEnd() { return Close(false, pb::END_REASON_UNSPECIFIED); }

}  // namespace gs::trace::testing
