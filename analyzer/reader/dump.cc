#include "analyzer/reader/dump.h"

#include <cstdint>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/reader/trace_reader.h"

namespace gs::reader {
namespace {

namespace pb = gpustall::trace;

// Damage is printed where it is found, between the records around it.
class PrintingReporter : public Reporter {
 public:
  explicit PrintingReporter(std::ostream& out) : out_(out) {}
  void Corruption(uint64_t offset, uint64_t bytes, const absl::Status& reason) override {
    out_ << "damage @" << offset << " (" << bytes << " bytes): " << reason.message() << "\n";
    ++count_;
  }
  uint64_t count() const { return count_; }

 private:
  std::ostream& out_;
  uint64_t count_ = 0;
};

std::string HexString(uint64_t v) { return absl::StrCat(absl::Hex(v)); }

std::string Quote(const std::string& s) { return absl::StrCat("\"", absl::CEscape(s), "\""); }

// Enum names without their prefix: "API_CLASS_LAUNCH" -> "LAUNCH".
std::string Short(const std::string& name, const std::string& prefix) {
  return name.compare(0, prefix.size(), prefix) == 0 ? name.substr(prefix.size()) : name;
}
std::string MemKindName(pb::MemKind k) { return Short(pb::MemKind_Name(k), "MEM_KIND_"); }

void PrintClock(std::ostream& out, const std::string& what, const pb::ClockSnapshot& c) {
  out << what << " monotonic_ns=" << c.monotonic_ns() << " realtime_ns=" << c.realtime_ns()
      << " boottime_ns=" << c.boottime_ns() << " uncertainty_ns=" << c.uncertainty_ns() << "\n";
}

void PrintClockSync(std::ostream& out, const std::string& what, const pb::ClockSync& c) {
  out << what << " domain=" << Short(pb::ClockDomain_Name(c.domain()), "CLOCK_DOMAIN_")
      << " device=" << c.device() << " monotonic_ns=" << c.monotonic_ns()
      << " other_ns=" << c.other_ns() << " uncertainty_ns=" << c.uncertainty_ns() << "\n";
}

void PrintCapture(std::ostream& out, const std::string& what, const pb::CaptureInfo& c) {
  out << what << " mode=" << Short(pb::CaptureMode_Name(c.mode()), "CAPTURE_MODE_")
      << " text=" << Quote(c.mode_text()) << " detail=" << Quote(c.detail())
      << " native_stacks=" << c.native_stacks() << " stack_depth=" << c.stack_depth()
      << " stack_method=" << Quote(c.stack_method()) << " python_stacks=" << c.python_stacks()
      << " sampling=" << c.sampling() << " sample_period_ns=" << c.sample_period_ns()
      << " nvtx=" << c.nvtx() << " host_waits=" << c.host_waits()
      << " host_wait_min_ns=" << c.host_wait_min_ns() << " cuda_runtime=" << Quote(c.cuda_runtime())
      << " cupti_cuda_major=" << c.cupti_cuda_major() << " cupti_version=" << c.cupti_version() << "\n";
  for (const std::string& b : c.blind_spots()) out << what << ".blind_spot " << Quote(b) << "\n";
}

void PrintDevice(std::ostream& out, const std::string& what, const pb::DeviceInfo& d) {
  out << what << " index=" << d.index() << " name=" << Quote(d.name())
      << " uuid=" << absl::BytesToHexString(d.uuid()) << " pci=" << d.pci_bus_id()
      << " pcie_gen=" << d.pcie_generation() << " pcie_width=" << d.pcie_width()
      << " memory=" << d.total_memory() << " sms=" << d.sm_count() << " cc=" << d.compute_major()
      << "." << d.compute_minor() << " mem_bw=" << d.memory_bandwidth();
  if (d.max_threads_per_sm() != 0) {
    out << " threads/block=" << d.max_threads_per_block() << " threads/sm=" << d.max_threads_per_sm()
        << " warp=" << d.warp_size() << " regs/block=" << d.registers_per_block()
        << " regs/sm=" << d.registers_per_sm() << " blocks/sm=" << d.max_blocks_per_sm()
        << " smem/block=" << d.shared_memory_per_block() << " smem/block_optin=" << d.shared_memory_per_block_optin()
        << " smem/sm=" << d.shared_memory_per_sm() << " smem_reserved/block=";
    if (d.has_reserved_shared_memory()) out << d.reserved_shared_memory_per_block();
    else out << "?";
  }
  out << "\n";
}

void PrintStats(std::ostream& out, const std::string& what, const pb::Stats& s) {
  out << what << " time_ns=" << s.time_ns() << " api_calls=" << s.api_calls_recorded()
      << " activities=" << s.activities_recorded() << " samples=" << s.samples_recorded()
      << " host_waits=" << s.host_waits_recorded() << " ring_dropped=" << s.ring_dropped() << " cupti_dropped=" << s.cupti_dropped()
      << " other_dropped=" << s.other_dropped() << " samples_dropped=" << s.samples_dropped()
      << " stacks_truncated=" << s.stacks_truncated()
      << " activities_without_time=" << s.activities_without_time()
      << " short_calls_unrecorded=" << s.short_calls_unrecorded()
      << " short_calls_unrecorded_ns=" << s.short_calls_unrecorded_ns()
      << " bytes_written=" << s.bytes_written() << " chunks_written=" << s.chunks_written()
      << " write_errors=" << s.write_errors() << " memory_bound=" << s.memory_bound_bytes()
      << " memory_used=" << s.memory_used_bytes() << "\n";
}

void PrintHeader(std::ostream& out, const pb::TraceHeader& h) {
  out << "header.schema_version " << h.schema_version() << "\n"
      << "header.agent_version " << Quote(h.agent_version()) << "\n"
      << "header.host " << Quote(h.host_name()) << " host_id=" << Quote(h.host_id())
      << " boot_id=" << Quote(h.boot_id()) << "\n"
      << "header.process pid=" << h.pid() << " ppid=" << h.ppid()
      << " exe=" << Quote(h.executable()) << " cwd=" << Quote(h.working_directory()) << "\n";
  out << "header.command_line";
  for (const std::string& a : h.command_line()) out << " " << Quote(a);
  out << "\n";
  out << "header.job job_id=" << Quote(h.job_id());
  if (h.has_rank()) out << " rank=" << h.rank();
  if (h.has_local_rank()) out << " local_rank=" << h.local_rank();
  if (h.has_world_size()) out << " world_size=" << h.world_size();
  if (h.has_local_world_size()) out << " local_world_size=" << h.local_world_size();
  out << " trace_id=0x" << HexString(h.trace_id()) << "\n";
  out << "header.versions cupti=" << h.cupti_version() << " runtime=" << h.cuda_runtime_version()
      << " driver=" << h.cuda_driver_version() << "\n";
  PrintClock(out, "header.start_clock", h.start_clock());
  for (const pb::ClockSync& c : h.clock_syncs()) PrintClockSync(out, "header.clock_sync", c);
  PrintCapture(out, "header.capture", h.capture());
  for (const pb::DeviceInfo& d : h.devices()) PrintDevice(out, "header.device", d);
  for (const pb::KeyValue& kv : h.settings()) {
    out << "header.setting " << kv.key() << "=" << Quote(kv.value()) << "\n";
  }
}

std::string Stack(const InternTables& tables, uint32_t id) {
  if (id == 0) return "-";
  return absl::StrCat("#", id, " [", tables.DescribeStack(id), "]");
}

void PrintApiCall(std::ostream& out, const trace::ApiCallRecord& r, const InternTables& t) {
  const std::string& name = t.function_name(r.function);
  out << "api t=" << r.enter_ns << " tid=" << r.thread_id << " "
      << (name.empty() ? absl::StrCat("<function #", r.function, ">") : name)
      << " class=" << Short(pb::ApiClass_Name(r.api_class), "API_CLASS_")
      << " dur=" << (r.exit_ns - r.enter_ns) << " corr=" << r.correlation_id;
  if (r.bytes != 0) out << " bytes=" << r.bytes;
  if (r.stream != 0) out << " stream=0x" << HexString(r.stream);
  if (r.copy_kind != 0 || r.src_kind != 0 || r.dst_kind != 0) {
    out << " copy_kind=" << static_cast<int>(r.copy_kind) << " src=" << MemKindName(r.src_kind)
        << " dst=" << MemKindName(r.dst_kind);
  }
  if (r.flags != 0) out << " flags=" << static_cast<int>(r.flags);
  if (r.result != 0) out << " result=" << r.result;
  if (r.device != 0) out << " dev=" << r.device;
  if (r.address != 0) out << " addr=0x" << HexString(r.address);
  out << " stack=" << Stack(t, r.stack) << "\n";
}

void PrintActivity(std::ostream& out, const trace::GpuActivityRecord& r, const InternTables& t) {
  out << "gpu t=" << r.start_ns << " dur=" << (r.end_ns - r.start_ns) << " dev=" << r.device
      << " stream=" << r.stream << " " << Short(pb::ActivityKind_Name(r.kind), "ACTIVITY_KIND_")
      << " src=" << Short(pb::ActivitySource_Name(r.source), "ACTIVITY_SOURCE_")
      << " corr=" << r.correlation_id;
  if (r.bytes != 0) out << " bytes=" << r.bytes;
  if (r.copy_kind != 0 || r.src_kind != 0 || r.dst_kind != 0) {
    out << " copy_kind=" << static_cast<int>(r.copy_kind) << " src=" << MemKindName(r.src_kind)
        << " dst=" << MemKindName(r.dst_kind);
  }
  if (r.flags != 0) out << " flags=" << static_cast<int>(r.flags);
  if (r.address != 0) out << " addr=0x" << HexString(r.address);
  if (r.context != 0) out << " ctx=" << r.context;
  if (r.sync_type != 0) out << " sync_type=" << r.sync_type;
  if (r.name != 0) out << " name=" << Quote(t.string(r.name));
  if (r.launch_config != 0) {
    out << " config=#" << r.launch_config;
    if (const pb::LaunchConfig* c = t.launch_config(r.launch_config)) {
      out << " [grid " << c->grid_x() << "x" << c->grid_y() << "x" << c->grid_z() << " block " << c->block_x()
          << "x" << c->block_y() << "x" << c->block_z();
      if (c->has_resources())
        out << " regs " << c->registers_per_thread() << " smem " << c->static_shared_memory() << "+"
            << c->dynamic_shared_memory();
      else
        out << " dynamic smem " << c->dynamic_shared_memory();
      out << "]";
    }
  }
  out << "\n";
}

}  // namespace

absl::Status DumpTrace(const std::string& path, std::ostream& out, ReaderOptions options) {
  PrintingReporter reporter(out);
  absl::StatusOr<std::unique_ptr<TraceReader>> opened = TraceReader::Open(path, &reporter, options);
  if (!opened.ok()) return opened.status();
  TraceReader& reader = **opened;
  const InternTables& t = reader.tables();
  out << "# gpustall trace " << path << " (format " << reader.format_version() << ", schema "
      << reader.header().schema_version() << ")\n";
  PrintHeader(out, reader.header());

  // Table sizes before a chunk tell which entries it added: ids are printed as they appear.
  ChunkEvents ev;
  while (true) {
    const size_t strings = t.num_strings(), functions = t.num_functions(),
                 modules = t.num_modules(), frames = t.num_frames(), stacks = t.num_stacks();
    absl::StatusOr<bool> more = reader.Next(&ev);
    if (!more.ok()) return more.status();
    if (!*more) break;
    out << "chunk " << ev.sequence << " @" << ev.offset << ": " << ev.api_calls.size()
        << " api calls, " << ev.activities.size() << " activities, " << ev.memory_events.size()
        << " memory events, " << ev.samples.size() << " samples, " << ev.nvtx_ranges.size()
        << " nvtx ranges; new: " << t.num_strings() - strings << " strings, "
        << t.num_functions() - functions << " functions, " << t.num_modules() - modules
        << " modules, " << t.num_frames() - frames << " frames, " << t.num_stacks() - stacks
        << " stacks\n";
    for (const auto& r : ev.api_calls) PrintApiCall(out, r, t);
    for (const auto& r : ev.activities) PrintActivity(out, r, t);
    for (const auto& r : ev.memory_events) {
      out << "mem t=" << r.time_ns << " " << Short(pb::MemoryEventKind_Name(r.kind), "MEMORY_EVENT_")
          << " dev=" << r.device << " addr=0x" << HexString(r.address) << " bytes=" << r.bytes
          << " kind=" << MemKindName(r.mem_kind) << " stream=0x" << HexString(r.stream)
          << " tid=" << r.thread_id << " stack=" << Stack(t, r.stack) << "\n";
    }
    for (const auto& r : ev.samples) {
      out << "sample t=" << r.time_ns << " tid=" << r.thread_id << " "
          << Short(pb::ThreadState_Name(r.state), "THREAD_STATE_") << " cpu=" << r.cpu
          << " cpu_time=" << r.cpu_time_delta_ns << " stack=" << Stack(t, r.stack) << "\n";
    }
    for (const auto& r : ev.nvtx_ranges) {
      out << "nvtx t=" << r.start_ns << " dur=" << (r.end_ns - r.start_ns) << " tid=" << r.thread_id
          << " name=" << Quote(t.string(r.name)) << " domain=" << Quote(t.string(r.domain))
          << " category=" << r.category << " color=0x" << HexString(r.color)
          << " depth=" << r.depth << " stack=" << Stack(t, r.stack) << "\n";
    }
    for (const auto& r : ev.host_waits) {
      out << "wait t=" << r.start_ns << " dur=" << (r.end_ns - r.start_ns) << " tid=" << r.thread_id
          << " " << Short(pb::ThreadState_Name(r.state), "THREAD_STATE_")
          << " function=" << Quote(t.string(r.function)) << " stack=" << Stack(t, r.stack) << "\n";
    }
    for (const auto& p : ev.process_stats) {
      out << "process t=" << p.time_ns() << " pid=" << p.pid() << " role="
          << Short(pb::ProcessRole_Name(p.role()), "PROCESS_ROLE_") << " utime_ns=" << p.utime_ns()
          << " stime_ns=" << p.stime_ns() << " rss=" << p.rss_bytes()
          << " vcsw=" << p.voluntary_switches() << " ivcsw=" << p.involuntary_switches()
          << " read=" << p.read_bytes() << " write=" << p.write_bytes()
          << " threads=" << p.num_threads() << " iowait_ns=" << p.iowait_ns() << " ppid=" << p.ppid()
          << " comm=" << Quote(p.comm()) << " depth=" << p.depth() << " probes=" << p.state_probes()
          << " running=" << p.probes_running() << " disk_wait=" << p.probes_disk_wait()
          << " sleeping=" << p.probes_sleeping() << " rchar=" << p.read_chars()
          << " start_time_ns=" << p.start_time_ns() << "\n";
      if (p.has_host()) {
        const pb::HostStats& h = p.host();
        out << "host t=" << p.time_ns() << " cores=" << h.online_cores() << " affinity=" << h.affinity_cores()
            << " load=" << h.load_1m() << "/" << h.load_5m() << "/" << h.load_15m()
            << " runnable=" << h.runnable_tasks() << " blocked=" << h.procs_blocked()
            << " cpu_user_ns=" << h.cpu_user_ns() << " cpu_system_ns=" << h.cpu_system_ns()
            << " cpu_idle_ns=" << h.cpu_idle_ns() << " cpu_iowait_ns=" << h.cpu_iowait_ns()
            << " cpu_steal_ns=" << h.cpu_steal_ns() << " tracked=" << h.tracked_processes()
            << " untracked=" << h.untracked_processes() << " collection_ns=" << h.collection_ns()
            << " collections=" << h.collections() << " period_ms=" << h.period_ms()
            << " probe_ms=" << h.probe_ms() << "\n";
      }
    }
    for (const auto& c : ev.clock_syncs) PrintClockSync(out, "clock_sync", c);
    if (ev.has_stats) PrintStats(out, "stats", ev.stats);
  }

  // The tables in full, once, at the end: ids in order, readable without scrolling back.
  // Ids are dense in traces the agent writes; the bound stops a damaged file's sparse ids from
  // making this walk billions of empty ids.
  for (uint32_t id = 1, seen = 0; seen < t.num_strings() && id <= 4 * t.num_strings() + 1024; ++id) {
    if (t.has_string(id)) {
      out << "string " << id << " " << Quote(t.string(id)) << "\n";
      ++seen;
    }
  }
  for (uint32_t id = 1, seen = 0; seen < t.num_functions() && id <= 4 * t.num_functions() + 1024; ++id) {
    if (const pb::ApiFunction* f = t.function(id)) {
      out << "function " << id << " " << f->name()
          << " class=" << Short(pb::ApiClass_Name(f->api_class()), "API_CLASS_")
          << " source=" << Short(pb::ApiSource_Name(f->source()), "API_SOURCE_")
          << " raw_id=" << f->raw_id() << "\n";
      ++seen;
    }
  }
  for (uint32_t id = 1, seen = 0; seen < t.num_modules() && id <= 4 * t.num_modules() + 1024; ++id) {
    if (const pb::Module* m = t.module(id)) {
      out << "module " << id << " " << Quote(m->path()) << " build_id="
          << absl::BytesToHexString(m->build_id()) << " load=0x" << HexString(m->load_address())
          << " size=" << m->size() << " offset=" << m->file_offset() << "\n";
      ++seen;
    }
  }
  for (uint32_t id = 1, seen = 0; seen < t.num_frames() && id <= 4 * t.num_frames() + 1024; ++id) {
    if (const pb::Frame* f = t.frame(id)) {
      out << "frame " << id << " " << Short(pb::FrameKind_Name(f->kind()), "FRAME_KIND_")
          << " module=" << f->module_id() << " rel_pc=0x" << HexString(f->rel_pc()) << " "
          << t.DescribeFrame(id) << "\n";
      ++seen;
    }
  }
  for (uint32_t id = 1, seen = 0; seen < t.num_stacks() && id <= 4 * t.num_stacks() + 1024; ++id) {
    const absl::Span<const uint32_t> frames = t.stack(id);
    if (!frames.empty() || t.stack_truncated(id)) {
      out << "stack " << id << " [" << absl::StrJoin(frames, " ") << "]"
          << (t.stack_truncated(id) ? " truncated" : "") << "\n";
      ++seen;
    }
  }
  for (const pb::DeviceInfo& d : reader.devices()) PrintDevice(out, "device", d);
  PrintCapture(out, "capture", reader.capture());
  if (const pb::TraceEnd* end = reader.end()) {
    out << "end reason=" << Short(pb::EndReason_Name(end->reason()), "END_REASON_")
        << " chunks=" << end->chunk_count() << " detail=" << Quote(end->detail()) << "\n";
    PrintClock(out, "end.clock", end->end_clock());
    PrintStats(out, "end.stats", end->stats());
  }
  const ReadStats& s = reader.stats();
  out << "# " << s.chunks << " chunks, " << s.api_calls << " api calls, " << s.activities
      << " activities, " << s.memory_events << " memory events, " << s.samples << " samples, "
      << s.nvtx_ranges << " nvtx ranges; " << s.file_bytes << " bytes\n";
  out << "# damage: " << reporter.count() << " reports, " << s.corrupt_frames
      << " corrupt frames, " << s.skipped_bytes << " bytes skipped, " << s.bad_batches
      << " bad batches, " << s.missing_chunks << " missing chunks, " << s.truncated_bytes
      << " bytes truncated; " << (s.clean_end ? "clean end" : "no end record (process did not finish writing)")
      << "\n";
  return absl::OkStatus();
}

}  // namespace gs::reader
