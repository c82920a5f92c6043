#include "analyzer/model/importer.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analyzer/model/imported_trace.h"
#include "analyzer/model/main_program.h"
#include "analyzer/model/process_stats_import.h"
#include "analyzer/model/schema_enums.h"
#include "analyzer/reader/trace_reader.h"

namespace gs::analyzer {

namespace tr = gpustall::trace;

// TraceTables over the reader's interned tables (resolved lazily, at report time).
class TraceImporter::ReaderTables final : public TraceTables {
 public:
  ReaderTables(const reader::InternTables& t, MainProgram main) : t_(t), main_(std::move(main)) {}
  std::string FunctionName(uint32_t id) const override {
    std::string_view name = t_.function_name(id);
    if (!name.empty()) return std::string(name);
    return id ? absl::StrCat("api#", id) : std::string("(unknown call)");
  }
  std::string ThreadName(uint64_t tid) const override {
    const tr::ThreadInfo* info = t_.thread(tid);
    return info ? info->name() : std::string();
  }
  std::string StringValue(uint32_t id) const override {
    return id != 0 && t_.has_string(id) ? std::string(t_.string(id)) : std::string();
  }
  const LaunchConfig* LaunchConfigOf(uint32_t id) const override {
    if (id == 0) return nullptr;
    if (auto it = launch_configs_.find(id); it != launch_configs_.end()) return &it->second;
    const tr::LaunchConfig* p = t_.launch_config(id);
    if (p == nullptr) return nullptr;  // defined in a lost chunk
    LaunchConfig c;
    c.grid[0] = p->grid_x(), c.grid[1] = p->grid_y(), c.grid[2] = p->grid_z();
    c.block[0] = p->block_x(), c.block[1] = p->block_y(), c.block[2] = p->block_z();
    c.has_resources = p->has_resources();
    c.registers_per_thread = p->registers_per_thread();
    c.shared_memory_bytes = uint64_t{p->static_shared_memory()} + p->dynamic_shared_memory();
    return &launch_configs_.emplace(id, c).first->second;
  }
  std::vector<FrameInfo> ResolveStack(uint32_t stack_id) const override {
    std::vector<FrameInfo> out;
    for (uint32_t id : t_.stack(stack_id)) {
      FrameInfo f;
      const tr::Frame* frame = t_.frame(id);
      if (frame != nullptr) {
        f.function = std::string(t_.string(frame->function_id()));
        f.file = std::string(t_.string(frame->file_id()));
        f.line = frame->line();
        if (const tr::Module* m = t_.module(frame->module_id())) f.module = m->path();
        if (f.function.empty()) f.function = t_.DescribeFrame(id);  // "module+0x..." unsymbolised
        f.main_program = main_.Owns(f);
      } else {
        f.function = absl::StrCat("<frame #", id, ">");
      }
      out.push_back(std::move(f));
    }
    return out;
  }

 private:
  const reader::InternTables& t_;
  const MainProgram main_;
  // Converted on first use (the analysis asks once per distinct configuration and device).
  mutable absl::flat_hash_map<uint32_t, LaunchConfig> launch_configs_;
};

namespace {

ApiCall Convert(const trace::ApiCallRecord& r) {
  ApiCall c;
  c.enter_ns = static_cast<TimeNs>(r.enter_ns);
  c.exit_ns = static_cast<TimeNs>(r.exit_ns);
  c.bytes = r.bytes;
  c.stream = r.stream;
  c.address = r.address;
  c.thread = r.thread_id;
  c.correlation = r.correlation_id;
  c.stack = r.stack;
  c.function = r.function;
  c.result = r.result;
  c.device = r.device;
  c.api_class = FromSchema(r.api_class);
  c.direction = DirectionFromCudaMemcpyKind(r.copy_kind);
  c.src_kind = FromSchema(r.src_kind);
  c.dst_kind = FromSchema(r.dst_kind);
  c.async = (r.flags & 1) != 0;
  return c;
}

GpuActivity Convert(const trace::GpuActivityRecord& r) {
  GpuActivity a;
  a.start_ns = static_cast<TimeNs>(r.start_ns);
  a.end_ns = static_cast<TimeNs>(r.end_ns);
  a.bytes = r.bytes;
  a.correlation = r.correlation_id;
  a.device = r.device;
  a.stream = r.stream;
  a.name = r.name;
  a.launch_config = r.launch_config;
  a.kind = FromSchema(r.kind);
  a.direction = DirectionFromCuptiMemcpyKind(r.copy_kind);
  a.src_kind = FromSchema(r.src_kind);
  a.dst_kind = FromSchema(r.dst_kind);
  return a;
}

DeviceDescription Describe(const tr::DeviceInfo& d) {
  DeviceDescription desc;
  desc.index = d.index();
  desc.name = d.name();
  desc.total_memory = d.total_memory();
  desc.pcie_generation = d.pcie_generation();
  desc.pcie_width = d.pcie_width();
  desc.sm_count = d.sm_count();
  // The compute capability alone says what the device is (the exports write it); occupancy needs
  // the SM limits too, when the agent read them all (an older trace has none: occupancy unknown).
  // Each limit as an int (a damaged file's larger values are clamped, never wrapped).
  auto i = [](uint64_t v) { return static_cast<int>(std::min<uint64_t>(v, std::numeric_limits<int>::max())); };
  desc.sm.cc_major = i(d.compute_major());
  desc.sm.cc_minor = i(d.compute_minor());
  if (d.max_threads_per_sm() > 0 && d.registers_per_sm() > 0 && d.shared_memory_per_sm() > 0 &&
      d.warp_size() > 0 && d.max_threads_per_block() > 0 && d.registers_per_block() > 0 &&
      d.shared_memory_per_block() > 0) {
    OccupancyDevice& sm = desc.sm;
    sm.max_threads_per_block = i(d.max_threads_per_block());
    sm.max_threads_per_sm = i(d.max_threads_per_sm());
    sm.warp_size = i(d.warp_size());
    sm.registers_per_block = i(d.registers_per_block());
    sm.registers_per_sm = i(d.registers_per_sm());
    sm.shared_per_block = i(d.shared_memory_per_block());
    sm.shared_per_block_optin = i(d.shared_memory_per_block_optin());
    sm.shared_per_sm = i(d.shared_memory_per_sm());
    sm.reserved_shared_per_block = i(d.reserved_shared_memory_per_block());
    // A driver that did not say: from cc 8 the reserve is what the SM has beyond the opt-in limit
    // (as the PyTorch-profiler importer derives it).
    if (!d.has_reserved_shared_memory() && sm.cc_major >= 8 && sm.shared_per_block_optin > 0 &&
        sm.shared_per_sm > sm.shared_per_block_optin)
      sm.reserved_shared_per_block = sm.shared_per_sm - sm.shared_per_block_optin;
  }
  return desc;
}

}  // namespace

// The analysis keeps per-time-bin state (utilisation every 1/6 s): a timestamp from a damaged
// or hostile file (one flipped high bit is 146 years) must not size it. Real traces span hours
// to days: a window of 14 days from the trace's start bounds that state to a few tens of MiB,
// and no CUDA call or GPU operation lasts a week.
constexpr uint64_t kDayNs = 86'400'000'000'000ull;
constexpr uint64_t kMaxTraceSpanNs = 14 * kDayNs;
constexpr uint64_t kMaxRecordNs = 7 * kDayNs;

bool TraceImporter::Plausible(uint64_t start_ns, uint64_t end_ns) {
  if (anchor_ns_ == 0) anchor_ns_ = start_ns;  // no start clock in the header: the first record
  // A day of slack before the start: records may precede the header's clock reading a little.
  const uint64_t lo = anchor_ns_ > kDayNs ? anchor_ns_ - kDayNs : 0;
  const uint64_t hi = anchor_ns_ > ~uint64_t{0} - kMaxTraceSpanNs ? ~uint64_t{0}
                                                                   : anchor_ns_ + kMaxTraceSpanNs;
  const bool ok = start_ns >= lo && start_ns <= hi && end_ns >= start_ns &&
                  end_ns - start_ns <= kMaxRecordNs &&
                  end_ns <= static_cast<uint64_t>(std::numeric_limits<TimeNs>::max());
  if (!ok) ++implausible_records_;
  return ok;
}

TraceImporter::~TraceImporter() = default;

absl::StatusOr<std::unique_ptr<TraceImporter>> TraceImporter::FromFd(int fd, const std::string& path,
                                                                     int decode_threads) {
  reader::ReaderOptions options;
  options.decode_threads = decode_threads;
  return Wrap(reader::TraceReader::FromFd(fd, path, nullptr, options), path);
}

std::unique_ptr<TraceImporter> TraceImporter::FromImported(std::unique_ptr<ImportedTrace> imported) {
  std::unique_ptr<TraceImporter> imp(new TraceImporter());
  imp->imported_ = std::move(imported);
  imp->info_ = imp->imported_->info();
  return imp;
}

absl::StatusOr<std::unique_ptr<TraceImporter>> TraceImporter::FromBuffer(std::string bytes,
                                                                         const std::string& name) {
  return Wrap(reader::TraceReader::FromBuffer(std::move(bytes), nullptr, name), name);
}

absl::StatusOr<std::unique_ptr<TraceImporter>> TraceImporter::Wrap(
    absl::StatusOr<std::unique_ptr<reader::TraceReader>> reader, const std::string& path) {
  if (!reader.ok()) {
    // The reader's messages name the file already when it could open it; make sure they do.
    std::string msg(reader.status().message());
    if (msg.find(path) == std::string::npos) msg = absl::StrCat(path, ": ", msg);
    return absl::Status(reader.status().code(), msg);
  }
  std::unique_ptr<TraceImporter> imp(new TraceImporter());
  imp->reader_ = std::move(*reader);
  const tr::TraceHeader& h = imp->reader_->header();
  imp->tables_ = std::make_unique<ReaderTables>(
      imp->reader_->tables(),
      MainProgram::FromCommandLine({h.command_line().begin(), h.command_line().end()}, h.executable(),
                                   h.working_directory()));
  imp->info_.path = path;
  imp->info_.host = h.host_name();
  imp->info_.pid = h.pid();
  if (h.has_rank()) imp->info_.rank = h.rank();
  imp->anchor_ns_ = h.start_clock().monotonic_ns();
  imp->devices_seen_ = imp->reader_->devices().size();  // TraceInfo::devices, given before reading
  imp->UpdateInfo();
  return imp;
}

void TraceImporter::UpdateInfo() {
  const tr::CaptureInfo& cap = reader_->capture();
  info_.capture_mode = cap.mode_text();
  info_.cuda_runtime = cap.cuda_runtime();
  info_.cupti_cuda_major = cap.cupti_cuda_major();
  info_.cupti_version = cap.cupti_version();
  info_.native_stacks = cap.native_stacks();
  info_.python_stacks = cap.python_stacks();
  info_.sampling = cap.sampling();
  info_.nvtx = cap.nvtx();
  info_.devices.clear();
  for (const tr::DeviceInfo& d : reader_->devices()) info_.devices.push_back(Describe(d));
  const tr::Stats& st = reader_->last_stats();
  const reader::ReadStats& rs = reader_->stats();
  LossCounters& l = info_.losses;
  l.ring_dropped = st.ring_dropped();
  l.cupti_dropped = st.cupti_dropped();
  l.other_dropped = st.other_dropped();
  l.samples_dropped = st.samples_dropped();
  l.stacks_truncated = st.stacks_truncated();
  l.activities_without_time = st.activities_without_time();
  l.corrupt_frames = rs.corrupt_frames + rs.bad_batches + implausible_records_;
  l.missing_chunks = rs.missing_chunks;
  l.truncated_bytes = rs.truncated_bytes;
  l.clean_end = rs.clean_end;
}

absl::Status TraceImporter::ReadAll(RecordSink* sink) {
  if (imported_ != nullptr) {
    absl::Status s = imported_->ReadAll(sink);
    info_ = imported_->info();
    if (progress_) progress_(imported_->file_bytes());
    return s;
  }
  reader::ChunkEvents ev;
  while (true) {
    absl::StatusOr<bool> more = reader_->Next(&ev);
    if (!more.ok()) return absl::Status(more.status().code(), absl::StrCat(info_.path, ": ", more.status().message()));
    if (!*more) break;
    if (chunk_observer_) chunk_observer_(ev, reader_->tables());
    // Devices this chunk described (the agent writes each before its first kernel's records).
    if (reader_->devices().size() != devices_seen_) {
      for (size_t i = devices_seen_; i < reader_->devices().size(); ++i)
        sink->OnDevice(Describe(reader_->devices()[i]));
      devices_seen_ = reader_->devices().size();
    }
    for (const tr::GraphNode& n : ev.graph_nodes)
      sink->OnGraphNode(GraphNode{n.node_id(), n.original_node_id(), n.correlation_id()});
    for (const trace::ApiCallRecord& r : ev.api_calls) {
      if (!Plausible(r.enter_ns, r.exit_ns)) continue;
      ApiCall call = Convert(r);
      call.sequence = calls_delivered_++;
      sink->OnApiCall(call);
    }
    for (const trace::GpuActivityRecord& r : ev.activities) {
      if (!Plausible(r.start_ns, r.end_ns)) continue;
      const GpuActivity a = Convert(r);
      sink->OnActivity(a);
      if (r.graph_node_id != 0 && a.kind == ActivityKind::kKernel) sink->OnGraphKernel(r.graph_node_id, a);
    }
    for (const trace::SampleRecord& r : ev.samples) {
      if (!Plausible(r.time_ns, r.time_ns)) continue;
      Sample s;
      s.time_ns = static_cast<TimeNs>(r.time_ns);
      s.thread = r.thread_id;
      s.stack = r.stack;
      s.state = static_cast<uint8_t>(r.state);
      sink->OnSample(s);
    }
    for (const trace::MemoryEventRecord& r : ev.memory_events) {
      if (!Plausible(r.time_ns, r.time_ns)) continue;
      MemoryEvent m;
      m.time_ns = static_cast<TimeNs>(r.time_ns);
      m.address = r.address;
      m.bytes = r.bytes;
      m.device = r.device;
      m.kind = FromSchema(r.kind);
      sink->OnMemoryEvent(m);
    }
    for (const trace::NvtxRangeRecord& r : ev.nvtx_ranges) {
      NvtxRange n;
      n.start_ns = static_cast<TimeNs>(r.start_ns);
      n.end_ns = static_cast<TimeNs>(r.end_ns);
      n.thread = r.thread_id;
      n.name = r.name;
      n.domain = r.domain;
      n.category = r.category;
      n.color = r.color;
      n.depth = r.depth;
      sink->OnNvtxRange(n);
    }
    for (const trace::HostWaitRecord& r : ev.host_waits) {
      if (!Plausible(r.start_ns, r.end_ns)) continue;
      HostWait w;
      w.start_ns = static_cast<TimeNs>(r.start_ns);
      w.end_ns = static_cast<TimeNs>(r.end_ns);
      w.thread = r.thread_id;
      w.stack = r.stack;
      w.function = r.function;
      w.state = static_cast<uint8_t>(r.state);
      sink->OnHostWait(w);
    }
    for (const tr::ProcessStats& p : ev.process_stats) info_.processes.Add(ProcessSampleFromProto(p));
    if (progress_) progress_(reader_->stats().file_bytes);
  }
  UpdateInfo();
  return absl::OkStatus();
}

const TraceTables& TraceImporter::tables() const {
  return imported_ != nullptr ? imported_->tables() : *tables_;
}

uint64_t TraceImporter::file_bytes() const {
  return imported_ != nullptr ? imported_->file_bytes() : reader_->stats().file_bytes;
}

std::string TraceImporter::DamageWarning() const {
  if (imported_ != nullptr) return imported_->DamageWarning();
  const reader::ReadStats& rs = reader_->stats();
  std::string w;
  if (rs.truncated_bytes > 0)
    absl::StrAppend(&w, info_.path, ": the trace was cut: the last ", rs.truncated_bytes,
                    " bytes (from offset ", rs.truncated_at, ") are an incomplete frame; analysed the ",
                    rs.chunks, rs.chunks == 1 ? " complete chunk" : " complete chunks", " before it");
  if (rs.corrupt_frames + rs.bad_batches + rs.missing_chunks > 0)
    absl::StrAppend(&w, w.empty() ? absl::StrCat(info_.path, ": ") : "; ", "damaged: ",
                    rs.corrupt_frames, " unreadable frames (", rs.skipped_bytes, " bytes skipped), ",
                    rs.bad_batches, " bad batches, ", rs.missing_chunks, " missing chunks");
  if (implausible_records_ > 0)
    absl::StrAppend(&w, w.empty() ? absl::StrCat(info_.path, ": ") : "; ", implausible_records_,
                    " records with impossible timestamps ignored (damaged or not from gpustall)");
  if (w.empty() && !rs.clean_end)
    absl::StrAppend(&w, info_.path, ": no end record: the process did not flush at exit (killed?); analysed what was written");
  return w;
}

}  // namespace gs::analyzer
