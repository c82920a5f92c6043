#include "agent/writer/trace_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "agent/capture/host_wait/host_wait.h"
#include "agent/core/clock.h"
#include "agent/writer/trace_enums.h"
#include "agent/python/fault_guard.h"
#include "proto/format.h"
#include "proto/framing.h"

namespace gs {
namespace {

namespace pb = gpustall::trace;

// The agent's own library. Its frames (the interposer a sampled thread sits in) keep their
// function names but get no file:line: the analysis counts every frame there as the CUDA
// runtime's (analyzer/classify/site_frame.cc) and no view shows its line, while decoding the
// agent's own .debug_line (1.3 MB, ~190 k rows in the RelWithDebInfo build) cost the writer
// ~9-13 ms of CPU in every process whose first wall-clock sample landed inside a wrapper
// (BENCHMARKS.md, "Who spends the loop's added CPU").
bool IsAgentLibrary(const std::string& path) {
  const size_t slash = path.rfind('/');
  return path.compare(slash == std::string::npos ? 0 : slash + 1, 10, "libgsagent") == 0;
}

std::string ThreadName(uint64_t tid) {
  const std::string path = "/proc/self/task/" + std::to_string(tid) + "/comm";
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  char buffer[64];
  const ssize_t n = read(fd, buffer, sizeof(buffer));
  close(fd);
  if (n <= 0) return "";
  std::string name(buffer, static_cast<size_t>(n));
  while (!name.empty() && (name.back() == '\n' || name.back() == '\0')) name.pop_back();
  return name;
}

}  // namespace

TraceWriter::TraceWriter(RingRecorder* recorder, std::unique_ptr<TraceFile> file,
                         ApiNameFunction api_names, uint64_t memory_bound)
    : recorder_(recorder), file_(std::move(file)), api_names_(api_names), memory_bound_(memory_bound) {
  ring_serial_seen_.assign(recorder_->pool().ring_count(), 0);
  recent_stacks_.resize(recorder_->pool().ring_count());
  recorder_->NewReuseEpoch();  // this writer has seen no reuse entry filled
}

TraceWriter::~TraceWriter() = default;

bool TraceWriter::Fail(const std::string& what) {
  if (!failed_) {
    failed_ = true;
    error_ = what;
    ++write_errors_;
  }
  return false;
}

void TraceWriter::SerializePayload(const google::protobuf::MessageLite& message) {
  payload_.resize(message.ByteSizeLong());
  message.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(payload_.data()));
}

bool TraceWriter::WriteFrame(uint8_t type, const google::protobuf::MessageLite& message) {
  if (failed_) return false;
  SerializePayload(message);
  return WritePayload(type);
}

bool TraceWriter::WritePayload(uint8_t type) {
  if (failed_) return false;
  const size_t size = payload_.size();
  if (size > trace::kMaxPayloadSize) return Fail("trace frame too large");
  frame_.resize(trace::MaxCompressedFrameSize(size));
  const size_t n = frame_encoder_.Encode(static_cast<trace::FrameType>(type), payload_.data(), size,
                                        reinterpret_cast<unsigned char*>(frame_.data()), frame_.size());
  if (n == 0) return Fail("could not encode a trace frame");
  std::string reason;
  if (!file_->Append(frame_.data(), n, &reason)) return Fail("write failed: " + reason);
  bytes_written_ += n;
  return true;
}

bool TraceWriter::Start(const pb::TraceHeader& header) {
  if (started_) return !failed_;
  started_ = true;
  base_capture_ = header.capture();
  FillProcessStats(&baseline_);
  unsigned char prelude[trace::kPreludeSize];
  trace::EncodePrelude(prelude);
  std::string reason;
  if (!file_->Append(prelude, sizeof(prelude), &reason)) return Fail("write failed: " + reason);
  bytes_written_ += sizeof(prelude);
  return WriteFrame(static_cast<uint8_t>(trace::FrameType::kHeader), header);
}

size_t TraceWriter::Drain() {
  if (finished_) return 0;
  if (!modules_scanned_) {
    modules_scanned_ = true;
    AddModules(modules_.Refresh());
  }
  const uint64_t before = api_calls_ + activities_count_ + host_waits_;
  RingPool& pool = recorder_->pool();
  uint64_t used = 0;
  for (size_t i = 0; i < pool.ring_count(); ++i) {
    ThreadRing& ring = pool.ring(i);
    const int state = ring.state.load(std::memory_order_acquire);
    if (state != ThreadRing::kOwned && state != ThreadRing::kExited) continue;
    used += ring.ring.used_bytes();
    DrainRing(i, ring);
    // kExited was published after the owner's last record: the drain above saw everything.
    if (state == ThreadRing::kExited) RingPool::Recycle(&ring);
  }
  if (used > memory_used_) memory_used_ = used;
  DrainActivities();
  size_t others = 0;
  for (ChunkContributor* contributor : contributors_) others += contributor->DrainInto(this);
  return static_cast<size_t>(api_calls_ + activities_count_ + host_waits_ - before) + others;
}

void TraceWriter::DrainRing(size_t index, ThreadRing& ring) {
  const bool serial_changed = ring_serial_seen_[index] != ring.owner_serial;
  if (serial_changed) {
    ring_serial_seen_[index] = ring.owner_serial;
    pb::ThreadInfo* info = chunk_.add_threads();
    info->set_tid(ring.tid);
    info->set_name(ThreadName(ring.tid));
    info->set_is_main(ring.tid == static_cast<uint64_t>(getpid()));
    tables_changed_ = true;
  }
  const uint64_t tid = ring.tid;
  RecentStacks* recent = &recent_stacks_[index];
  // A new owner starts with an empty reuse table (RingPool::Claim): its entries name nothing yet.
  if (serial_changed) {
    std::fill(std::begin(recent->reuse_ids), std::end(recent->reuse_ids), 0u);
    recent->reused.Clear();
  }
  size_t api_batch = SIZE_MAX;
  ring.ring.Drain([&](const RingRecordHeader& record) {
    if (record.type == kRingApiCall) {
      ApiCallView call = RingRecorder::View(record);
      recent->reused.Resolve(&call);
      AddApiCall(tid, call, recent, &api_batch);
    } else if (record.type == kRingHostWait) {
      HostWaitView wait = RingRecorder::ViewHostWait(record);
      recent->reused.Resolve(&wait);
      AddHostWait(tid, wait, recent);
    }
  });
}

bool TraceWriter::SameStack(const RecentStack& c, const StackView& s, size_t pcs, size_t py) {
  return c.pc_count == s.pc_count && c.python_count == s.python_count && c.truncated == s.truncated &&
         c.python_truncated == s.python_truncated &&
         (pcs == 0 || std::memcmp(c.raw.data(), s.pcs, pcs * sizeof(uint64_t)) == 0) &&
         (py == 0 || std::memcmp(c.raw.data() + pcs, s.python, py * sizeof(uint64_t)) == 0);
}

uint32_t TraceWriter::InternRecordStack(const StackView& s, RecentStacks* recent) {
  static_assert(sizeof(PythonFrameRef) == sizeof(uint64_t), "one word per Python frame");
  const size_t pcs = s.pc_count > 0 ? static_cast<size_t>(s.pc_count) : 0;
  const size_t py = s.python_count > 0 ? static_cast<size_t>(s.python_count) : 0;
  for (uint32_t k = 0; k < RecentStacks::kEntries; ++k) {
    const uint32_t i = (recent->last_hit + k) % RecentStacks::kEntries;
    const RecentStack& c = recent->entries[i];
    if (!SameStack(c, s, pcs, py)) continue;
    recent->last_hit = i;
    // What InternStack would have counted.
    if (c.id != 0 && (s.truncated || s.python_truncated)) ++stacks_truncated_;
    ++stack_repeats_;
    return c.id;
  }
  const uint32_t id = InternStack(s);
  const uint32_t i = recent->next++ % RecentStacks::kEntries;
  RecentStack& c = recent->entries[i];
  c.raw.resize(pcs + py);
  if (pcs > 0) std::memcpy(c.raw.data(), s.pcs, pcs * sizeof(uint64_t));
  if (py > 0) std::memcpy(c.raw.data() + pcs, s.python, py * sizeof(uint64_t));
  c.pc_count = s.pc_count;
  c.python_count = s.python_count;
  c.truncated = s.truncated;
  c.python_truncated = s.python_truncated;
  c.id = id;
  recent->last_hit = i;
  return id;
}

template <typename View>
uint32_t TraceWriter::RecordStackId(const View& record, RecentStacks* recent) {
  const int entry = record.reuse_entry;
  if ((record.flags & kRingFlagStackReused) != 0 && record.python_count == 0 && recent->reuse_ids[entry] != 0) {
    // What InternRecordStack would have counted.
    if (record.truncated) ++stacks_truncated_;
    ++stack_repeats_;
    ++stack_reuse_ids_;
    return recent->reuse_ids[entry];
  }
  const uint32_t id = InternRecordStack(StackView{record.pcs, record.pc_count, record.truncated, record.python,
                                                  record.python_count, record.python_truncated},
                                        recent);
  if ((record.flags & kRingFlagStackDefinesReuse) != 0) recent->reuse_ids[entry] = record.python_count == 0 ? id : 0;
  return id;
}

void TraceWriter::AddHostWait(uint64_t tid, const HostWaitView& wait, RecentStacks* recent) {
  const HostWaitEvent& e = *wait.event;
  trace::HostWaitRecord r;
  r.start_ns = e.enter_ns;
  r.end_ns = e.exit_ns < e.enter_ns ? e.enter_ns : e.exit_ns;
  // The libc name, interned once per trace.
  if (e.function >= wait_function_ids_.size()) wait_function_ids_.resize(e.function + 1u, 0);
  uint32_t& name = wait_function_ids_[e.function];
  if (name == 0) {
    const char* known = HostWaitName(e.function);
    name = InternString(known != nullptr ? known : "wait_" + std::to_string(e.function));
  }
  r.function = name;
  r.state = ToTrace(e.state);
  // The same interning as an API call's stack: one table, Python frames merged.
  r.stack = RecordStackId(wait, recent);
  auto [it, inserted] = wait_batch_of_thread_.try_emplace(tid, wait_encoders_.size());
  if (inserted) {
    wait_encoders_.emplace_back();
    wait_encoders_.back().Begin(chunk_.add_host_waits(), tid, r.start_ns);
  }
  wait_encoders_[it->second].Add(r);
  ++host_waits_;
  ++records_in_chunk_;
}

void TraceWriter::AddApiCall(uint64_t tid, const ApiCallView& call, RecentStacks* recent, size_t* batch) {
  const ApiCallEvent& e = *call.event;
  trace::ApiCallRecord r;
  r.enter_ns = e.enter_ns;
  r.exit_ns = e.exit_ns < e.enter_ns ? e.enter_ns : e.exit_ns;
  r.bytes = e.bytes;
  r.stream = e.stream;
  r.address = e.address;
  r.function = FunctionId(e);
  r.correlation_id = e.correlation_id;
  r.stack = RecordStackId(call, recent);
  r.result = e.result;
  r.device = e.device;
  r.copy_kind = e.copy_kind;
  r.src_kind = ToTrace(e.src_kind);
  r.dst_kind = ToTrace(e.dst_kind);
  r.flags = e.flags;
  if (*batch == SIZE_MAX) {
    auto [it, inserted] = batch_of_thread_.try_emplace(tid, api_encoders_used_);
    if (inserted) {
      if (api_encoders_used_ == api_encoders_.size()) api_encoders_.emplace_back();
      api_encoders_[api_encoders_used_++].Begin(tid, e.enter_ns);
    }
    *batch = it->second;
  }
  api_encoders_[*batch].Add(r);
  ++api_calls_;
  ++records_in_chunk_;
}

uint32_t TraceWriter::InternString(const std::string& value) {
  if (value.empty()) return 0;
  auto [it, inserted] = strings_.try_emplace(value, static_cast<uint32_t>(strings_.size() + 1));
  if (inserted) {
    pb::InternedString* s = chunk_.add_strings();
    s->set_id(it->second);
    s->set_value(value);
    tables_changed_ = true;
  }
  return it->second;
}

uint32_t TraceWriter::FunctionId(const ApiCallEvent& e) {
  const size_t source = static_cast<size_t>(e.source);
  const bool flat = source < kFlatFunctionSources && e.api_id < kFlatFunctionIds;
  if (flat && e.api_id < flat_function_ids_[source].size() && flat_function_ids_[source][e.api_id] != 0) {
    return flat_function_ids_[source][e.api_id];
  }
  const uint32_t key = static_cast<uint32_t>(e.source) << 16 | e.api_id;
  auto [it, inserted] = functions_.try_emplace(key, static_cast<uint32_t>(functions_.size() + 1));
  if (flat) {
    std::vector<uint32_t>& ids = flat_function_ids_[source];
    if (ids.size() <= e.api_id) ids.resize(e.api_id + 1u, 0);
    ids[e.api_id] = it->second;
  }
  if (inserted) {
    const char* name = api_names_ != nullptr ? api_names_(e.source, e.api_id) : nullptr;
    pb::ApiFunction* f = chunk_.add_api_functions();
    f->set_id(it->second);
    f->set_name(name != nullptr ? std::string(name)
                                : (e.source == ApiSource::kCuptiCallback         ? "cupti_cbid_"
                                   : e.source == ApiSource::kCuptiDriverCallback ? "cupti_driver_cbid_"
                                                                                 : "api_") +
                                      std::to_string(e.api_id));
    f->set_api_class(ToTrace(e.api_class));
    f->set_source(ToTrace(e.source));
    f->set_raw_id(e.api_id);
    tables_changed_ = true;
  }
  return it->second;
}

uint32_t TraceWriter::InternStack(const StackView& call) {
  if (call.pc_count <= 0 && call.python_count <= 0) return 0;
  const uint64_t* keys = call.pcs;
  size_t count = static_cast<size_t>(call.pc_count);
  const bool truncated = call.truncated || call.python_truncated;
  if (call.python_count > 0 && recorder_->python() != nullptr) {
    count = MergePythonFrames(call);
    keys = merged_keys_scratch_.data();
  }
  bool is_new = false;
  new_frames_scratch_.clear();
  const uint32_t id = stacks_.InternStack(keys, count, truncated, &is_new, &frame_ids_scratch_, &new_frames_scratch_);
  if (truncated) ++stacks_truncated_;
  if (is_new) {
    for (auto [frame_id, key] : new_frames_scratch_) {
      if (IsPythonFrameKey(key)) {
        DescribePythonFrame(frame_id, key);
      } else {
        DescribeFrame(frame_id, key);
      }
    }
    pb::Stack* stack = chunk_.add_stacks();
    stack->set_id(id);
    for (uint32_t frame : frame_ids_scratch_) stack->add_frame_ids(frame);
    stack->set_truncated(truncated);
    tables_changed_ = true;
  }
  return id;
}

// The merged stack of `call` as frame keys in merged_keys_scratch_; returns their number.
size_t TraceWriter::MergePythonFrames(const StackView& call) {
  const PythonStackReader& python = *recorder_->python();
  const size_t native_count = static_cast<size_t>(call.pc_count);
  const size_t python_count = static_cast<size_t>(call.python_count);
  native_kinds_scratch_.resize(native_count);
  for (size_t i = 0; i < native_count; ++i) {
    // Caller frames hold return addresses: the call instruction is the byte before.
    const uint64_t pc = call.pcs[i] - (i > 0 ? 1 : 0);
    native_kinds_scratch_[i] = python.IsEvalFramePc(pc) ? NativeFrameKind::kEvalFrame : NativeFrameKind::kNative;
  }
  merged_scratch_.resize(native_count + python_count);
  const size_t n = MergeNativeAndPythonFrames(native_kinds_scratch_.data(), native_count, call.python,
                                              python_count, merged_scratch_.data(), merged_scratch_.size());
  merged_keys_scratch_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const MergedFrame& m = merged_scratch_[i];
    if (m.is_python) {
      const PythonFrameRef& ref = call.python[m.index];
      merged_keys_scratch_[i] = PythonFrameKey(ref.code_id, ref.addrq);
    } else {
      merged_keys_scratch_[i] = call.pcs[m.index];
    }
  }
  return n;
}

void TraceWriter::DescribePythonFrame(uint32_t frame_id, uint64_t key) {
  if (python_symbolizer_ == nullptr)
    python_symbolizer_ = std::make_unique<PythonSymbolizer>(recorder_->python()->code_table());
  PythonFrameRef ref{};
  ref.code_id = PythonFrameKeyCodeId(key);
  ref.addrq = PythonFrameKeyAddrq(key);
  PythonSymbol symbol;
  python_symbolizer_->Symbolize(ref, &symbol);
  pb::Frame* frame = chunk_.add_frames();
  frame->set_id(frame_id);
  frame->set_kind(pb::FRAME_KIND_PYTHON);
  frame->set_function_id(InternString(std::string(symbol.function)));
  frame->set_file_id(InternString(std::string(symbol.filename)));
  if (symbol.line > 0) frame->set_line(static_cast<uint32_t>(symbol.line));
}

void TraceWriter::DescribeFrame(uint32_t frame_id, uint64_t pc) {
  std::vector<const ModuleInfo*> discovered;
  const ModuleInfo* module = modules_.Find(pc, &discovered);
  AddModules(discovered);
  pb::Frame* frame = chunk_.add_frames();
  frame->set_id(frame_id);
  frame->set_kind(pb::FRAME_KIND_NATIVE);
  if (module == nullptr) {
    frame->set_rel_pc(pc);
    return;
  }
  frame->set_module_id(module->id);
  frame->set_rel_pc(pc - module->load_address);
  if (!module->has_file) return;
  // Every captured PC is a return address: look up the call instruction before it.
  const SymbolInfo symbol = symbolizer_.Symbolize(module->id, module->path, pc - 1 - module->bias,
                                                  /*with_line=*/!IsAgentLibrary(module->path));
  if (!symbol.function.empty()) {
    frame->set_function_id(InternString(symbol.function));
    frame->set_symbol_offset(symbol.function_offset + 1);
  }
  if (!symbol.file.empty()) {
    frame->set_file_id(InternString(symbol.file));
    frame->set_line(symbol.line);
  }
}

void TraceWriter::AddModules(const std::vector<const ModuleInfo*>& modules) {
  for (const ModuleInfo* m : modules) {
    pb::Module* out = chunk_.add_modules();
    out->set_id(m->id);
    out->set_path(m->path);
    out->set_build_id(m->build_id);
    out->set_load_address(m->load_address);
    out->set_size(m->end - m->start);
    tables_changed_ = true;
  }
}

void TraceWriter::DrainActivities() {
  ActivityBuffer& buffer = recorder_->activities();
  buffer.TakeAll(&activities_);
  for (const PendingActivity& pending : activities_) {
    const GpuActivityEvent& a = pending.activity;
    if (a.start_ns < first_activity_ns_) continue;
    trace::GpuActivityRecord r;
    r.start_ns = a.start_ns;
    r.end_ns = a.end_ns < a.start_ns ? a.start_ns : a.end_ns;
    r.bytes = a.bytes;
    r.address = a.address;
    r.correlation_id = a.correlation_id;
    r.device = a.device;
    r.stream = a.stream_id;
    r.context = a.context_id;
    r.sync_type = a.sync_type;
    r.graph_node_id = a.graph_node_id;
    if (a.kind == ActivityKind::kKernel) {
      DescribeDevice(a.device);
      if ((a.launch_flags & kLaunchConfigKnown) != 0) r.launch_config = LaunchConfigId(a);
    }
    if (pending.name_index != 0) {
      if (pending.name_index >= activity_name_ids_.size()) activity_name_ids_.resize(pending.name_index + 1, 0);
      uint32_t& id = activity_name_ids_[pending.name_index];
      if (id == 0) id = InternString(buffer.NameAt(pending.name_index));
      r.name = id;
    }
    r.kind = ToTrace(a.kind);
    r.source = ToTrace(a.source);
    r.copy_kind = a.copy_kind;
    r.src_kind = ToTrace(a.src_kind);
    r.dst_kind = ToTrace(a.dst_kind);
    r.flags = a.flags;
    if (!activity_batch_open_) {
      activity_encoder_.Begin(r.start_ns);
      activity_batch_open_ = true;
    }
    activity_encoder_.Add(r);
    ++activities_count_;
    ++records_in_chunk_;
  }
  buffer.TakeGraphNodes(&graph_nodes_);
  for (const GraphNodeEvent& n : graph_nodes_) {
    pb::GraphNode* node = chunk_.add_graph_nodes();
    node->set_node_id(n.node_id);
    node->set_original_node_id(n.original_node_id);
    node->set_correlation_id(n.correlation_id);
    node->set_thread_id(n.thread_id);
    node->set_time_ns(n.time_ns);
    ++records_in_chunk_;
  }
}

uint32_t TraceWriter::LaunchConfigId(const GpuActivityEvent& k) {
  const bool resources = (k.launch_flags & kLaunchResourcesKnown) != 0;
  const uint32_t registers = resources ? k.registers_per_thread : 0;
  const uint32_t static_shared = resources ? k.static_shared_bytes : 0;
  // The key as five words built in registers from the record: a key array written word by word
  // and compared by memcmp stalls on its reads (no store forwarding across two stores), half of
  // this function's samples in agent/writer/writer_bench.cc's profile.
  auto pack = [](uint32_t low, uint32_t high) { return uint64_t{high} << 32 | low; };
  const PackedLaunchKey packed{pack(k.grid[0], k.grid[1]), pack(k.grid[2], k.block[0]), pack(k.block[1], k.block[2]),
                               pack(registers, static_shared), pack(k.dynamic_shared_bytes, resources ? 1u : 0u)};
  const uint32_t n = static_cast<uint32_t>(recent_launches_.size());
  for (uint32_t i = 1; i <= n; ++i) {
    const uint32_t slot = (last_recent_launch_ + i) % n;
    const RecentLaunch& r = recent_launches_[slot];
    uint64_t diff = 0;
    for (size_t w = 0; w < packed.size(); ++w) diff |= r.packed[w] ^ packed[w];
    if (r.id != 0 && diff == 0) {
      last_recent_launch_ = slot;
      return r.id;
    }
  }
  const LaunchKey key{k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2],
                      registers, static_shared, k.dynamic_shared_bytes, resources ? 1u : 0u};
  auto [it, inserted] = launch_configs_.try_emplace(key, static_cast<uint32_t>(launch_configs_.size() + 1));
  recent_launches_[next_recent_launch_] = RecentLaunch{packed, it->second};
  last_recent_launch_ = next_recent_launch_;
  next_recent_launch_ = (next_recent_launch_ + 1) % n;
  if (inserted) {
    pb::LaunchConfig* c = chunk_.add_launch_configs();
    c->set_id(it->second);
    c->set_grid_x(key[0]);
    c->set_grid_y(key[1]);
    c->set_grid_z(key[2]);
    c->set_block_x(key[3]);
    c->set_block_y(key[4]);
    c->set_block_z(key[5]);
    c->set_registers_per_thread(key[6]);
    c->set_static_shared_memory(key[7]);
    c->set_dynamic_shared_memory(key[8]);
    c->set_has_resources(resources);
    tables_changed_ = true;
  }
  return it->second;
}

void TraceWriter::DescribeDevice(uint32_t device) {
  // Ordinals are small (a process sees at most a few dozen devices); a damaged id is not asked.
  constexpr uint32_t kMaxDevices = 1024;
  if (!describe_device_ || device >= kMaxDevices) return;
  if (device >= devices_described_.size()) devices_described_.resize(device + 1, false);
  if (devices_described_[device]) return;
  devices_described_[device] = true;
  pb::DeviceInfo info;
  if (!describe_device_(device, &info)) return;
  info.set_index(device);
  *chunk_.add_devices() = std::move(info);
  tables_changed_ = true;
}

void TraceWriter::FillStats(pb::Stats* stats) {
  FillProcessStats(stats);
  // The loss counters come from what outlives a trace (the rings, CUPTI, the NVTX collector) and
  // are cumulative for the process; a trace reports its own: an on-demand window does not
  // inherit the drops of the windows before it (nor of the time between them).
  auto since_start = [](uint64_t now, uint64_t at_start) { return now > at_start ? now - at_start : 0; };
  stats->set_ring_dropped(since_start(stats->ring_dropped(), baseline_.ring_dropped()));
  stats->set_cupti_dropped(since_start(stats->cupti_dropped(), baseline_.cupti_dropped()));
  stats->set_other_dropped(since_start(stats->other_dropped(), baseline_.other_dropped()));
  stats->set_samples_recorded(since_start(stats->samples_recorded(), baseline_.samples_recorded()));
  stats->set_samples_dropped(since_start(stats->samples_dropped(), baseline_.samples_dropped()));
  stats->set_activities_without_time(
      since_start(stats->activities_without_time(), baseline_.activities_without_time()));
  stats->set_short_calls_unrecorded(
      since_start(stats->short_calls_unrecorded(), baseline_.short_calls_unrecorded()));
  stats->set_short_calls_unrecorded_ns(
      since_start(stats->short_calls_unrecorded_ns(), baseline_.short_calls_unrecorded_ns()));
}

void TraceWriter::FillProcessStats(pb::Stats* stats) {
  RingPool& pool = recorder_->pool();
  uint64_t ring_dropped = pool.no_ring_drops();
  for (size_t i = 0; i < pool.ring_count(); ++i)
    ring_dropped += pool.ring(i).dropped.load(std::memory_order_relaxed);
  stats->set_time_ns(MonotonicNs());
  stats->set_api_calls_recorded(api_calls_);
  stats->set_activities_recorded(activities_count_);
  stats->set_host_waits_recorded(host_waits_);
  stats->set_ring_dropped(ring_dropped);
  stats->set_cupti_dropped(recorder_->cupti_dropped());
  stats->set_short_calls_unrecorded(recorder_->unrecorded_calls());
  stats->set_short_calls_unrecorded_ns(recorder_->unrecorded_call_ns());
  uint64_t python_dropped = 0;
  if (const PythonStackReader* python = recorder_->python(); python != nullptr && python->enabled()) {
    // Python frames whose code object could not be stored (they read "<unknown>").
    const PythonCodeTableStats table = python->stats().code_table;
    python_dropped = table.table_full + table.arena_full + table.unreadable;
  }
  stats->set_other_dropped(recorder_->other_dropped() + recorder_->activities().dropped() + python_dropped);
  stats->set_bytes_written(bytes_written_);
  stats->set_chunks_written(chunks_written_);
  stats->set_stacks_truncated(stacks_truncated_);
  stats->set_write_errors(write_errors_);
  stats->set_memory_bound_bytes(memory_bound_);
  stats->set_memory_used_bytes(memory_used_);
  for (ChunkContributor* contributor : contributors_) contributor->AddStats(stats);
}

void WriteCaptureMode(const RingRecorder::CaptureMode& mode, pb::CaptureInfo* out) {
  out->set_mode(mode.mode.rfind("cupti", 0) == 0           ? pb::CAPTURE_MODE_CUPTI
                : mode.mode.rfind("interposition", 0) == 0 ? pb::CAPTURE_MODE_INTERPOSITION
                                                           : pb::CAPTURE_MODE_HOST_ONLY);
  out->set_mode_text(mode.mode);
  out->set_detail(mode.detail);
  out->set_cuda_runtime(mode.cuda_runtime);
  out->set_cupti_cuda_major(mode.cupti_cuda_major);
  out->set_cupti_version(mode.cupti_version);
}

bool TraceWriter::FlushChunk() {
  if (failed_ || !started_ || finished_) return false;
  RingRecorder::CaptureMode mode;
  if (recorder_->TakeCaptureMode(&mode)) {
    // base_capture_ follows the latest capture info, so a later chunk capture (Python stacks
    // turned off) repeats the current mode rather than the header's.
    WriteCaptureMode(mode, &base_capture_);
    *chunk_.mutable_capture() = base_capture_;
    tables_changed_ = true;
  }
  UpdatePythonCapture();
  FillStats(chunk_.mutable_stats());
  // Nothing new at all (an idle process): skip the chunk; the next one carries the same counters.
  const pb::Stats& s = chunk_.stats();
  const uint64_t signature = s.api_calls_recorded() * 31 + s.activities_recorded() * 17 + s.ring_dropped() * 7 +
                             s.cupti_dropped() * 5 + s.other_dropped() * 3 + s.memory_used_bytes() +
                             s.host_waits_recorded() * 13;
  if (records_in_chunk_ == 0 && !tables_changed_ && signature == last_stats_signature_ && chunks_written_ > 0) {
    chunk_.clear_stats();
    return true;
  }
  chunk_.set_sequence(sequence_++);
  bool ok = false;
  if (!failed_) {
    SerializePayload(chunk_);
    // The batches follow the chunk's other fields, encoded straight into the payload: a message's
    // fields may come in any order, and a repeated field's elements are read in the order they come.
    for (size_t i = 0; i < api_encoders_used_; ++i)
      api_encoders_[i].AppendAsField(pb::Chunk::kApiCallsFieldNumber, &payload_);
    if (activity_batch_open_) activity_encoder_.AppendAsField(pb::Chunk::kActivitiesFieldNumber, &payload_);
    ok = WritePayload(static_cast<uint8_t>(trace::FrameType::kChunk));
  }
  if (ok) ++chunks_written_;
  last_stats_signature_ = signature;
  chunk_.Clear();  // keeps the repeated fields' capacity: steady state does not allocate
  batch_of_thread_.clear();
  api_encoders_used_ = 0;
  wait_batch_of_thread_.clear();
  wait_encoders_.clear();
  activity_batch_open_ = false;
  records_in_chunk_ = 0;
  tables_changed_ = false;
  return ok;
}

// Once per flush: a Python reader that turned itself off after the header was written (its
// first live-thread check failed) is announced in the chunk's capture info; and the read guard
// goes back on top if the application installed its own SIGSEGV/SIGBUS handler since.
void TraceWriter::UpdatePythonCapture() {
  const PythonStackReader* python = recorder_->python();
  if (python == nullptr || !base_capture_.python_stacks()) return;
  if (python->enabled()) {
    ReinstallFaultGuardIfDisplaced();
    return;
  }
  base_capture_.set_python_stacks(false);
  const bool had_capture = chunk_.has_capture();
  pb::CaptureInfo* capture = chunk_.mutable_capture();
  if (!had_capture) *capture = base_capture_;
  capture->set_python_stacks(false);
  tables_changed_ = true;
}

bool TraceWriter::Finish(pb::EndReason reason, const std::string& detail) {
  if (finished_ || !started_) return !failed_;
  Drain();
  // Force the last chunk out even if nothing changed, so the final counters are in a chunk too.
  last_stats_signature_ = ~uint64_t{0};
  FlushChunk();
  finished_ = true;
  if (!failed_) {
    pb::TraceEnd end;
    end.set_reason(reason);
    end.set_detail(detail);
    pb::ClockSnapshot* clock = end.mutable_end_clock();
    clock->set_monotonic_ns(MonotonicNs());
    clock->set_realtime_ns(ClockNs(CLOCK_REALTIME));
    clock->set_boottime_ns(ClockNs(CLOCK_BOOTTIME));
    FillStats(end.mutable_stats());
    end.set_chunk_count(chunks_written_);
    WriteFrame(static_cast<uint8_t>(trace::FrameType::kEnd), end);
  }
  std::string reason_text;
  if (!file_->Close(&reason_text)) Fail("close failed: " + reason_text);
  return !failed_;
}

}  // namespace gs
