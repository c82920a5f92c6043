// trace_session.cc — opening and closing a trace (declared in agent_parts.h): the file, its
// writer and the writer thread, the chunk contributors (host stats, NVTX, samples), the capture
// source, the header. Once at activation and once per on-demand window.
#include <memory>
#include <string>

#include "agent/capture/cuda_device.h"
#include "agent/core/agent_parts.h"
#include "agent/core/clock.h"
#include "agent/core/log.h"
#include "agent/core/trace_header.h"
#include "agent/host_stats/host_stats_collector.h"
#include "agent/nvtx/nvtx_collector.h"
#include "agent/sampler/sampler.h"
#include "agent/writer/trace_file.h"

namespace gs {
namespace core {
namespace {

namespace pb = gpustall::trace;

// What the writer thread asks of the agent (writer_thread.h). One per activation, never freed.
class WriterOwner final : public WriterThread::Owner {
 public:
  explicit WriterOwner(AgentParts* parts) : parts_(parts) {}

  void FlushCaptureSource() override {
    MutexLock lock(&parts_->control_mu);
    if (parts_->source != nullptr && g_state.load() == static_cast<int>(AgentState::kActive))
      parts_->source->Flush(false);
  }
  void OnRecordsDrained() override { RegisterExitHandlerAfterRuntime(); }
  void OnWriteError(const std::string& error) override {
    DisableAfterFailure(parts_, "trace " + parts_->output_path + ": " + error);
  }
  void OnInternalError() override { DisableAfterFailure(parts_, "internal error in the writer thread"); }

 private:
  AgentParts* const parts_;
};

// A device for the trace (TraceWriter::SetDeviceDescriber), from the driver (cuda_device.h).
bool DescribeDevice(uint32_t ordinal, gpustall::trace::DeviceInfo* out) {
  CudaDeviceDescription d;
  if (!DescribeCudaDevice(ordinal, &d)) return false;
  auto u = [](int v) { return v > 0 ? static_cast<uint32_t>(v) : 0u; };
  out->set_name(d.name);
  out->set_total_memory(d.total_memory);
  out->set_sm_count(u(d.sm_count));
  out->set_compute_major(u(d.cc_major));
  out->set_compute_minor(u(d.cc_minor));
  out->set_max_threads_per_block(u(d.max_threads_per_block));
  out->set_max_threads_per_sm(u(d.max_threads_per_sm));
  out->set_warp_size(u(d.warp_size));
  out->set_registers_per_block(u(d.registers_per_block));
  out->set_registers_per_sm(u(d.registers_per_sm));
  out->set_max_blocks_per_sm(u(d.max_blocks_per_sm));
  out->set_shared_memory_per_block(u(d.shared_per_block));
  out->set_shared_memory_per_block_optin(u(d.shared_per_block_optin));
  out->set_shared_memory_per_sm(u(d.shared_per_sm));
  out->set_reserved_shared_memory_per_block(u(d.reserved_shared_per_block));
  out->set_has_reserved_shared_memory(d.has_reserved_shared);
  return true;
}

}  // namespace

bool OpenTrace(AgentParts* parts, const std::string& path, int window, std::string* why) {
  std::string error;
  std::unique_ptr<TraceFile> file = CreateTraceFile(path, &error, &parts->output_path);
  if (file == nullptr) {
    *why = "cannot create trace file " + path + ": " + error;
    return false;
  }
  const uint64_t bound = static_cast<uint64_t>(parts->config.buffer_mb) << 20;
  auto* writer = new TraceWriter(parts->recorder, std::move(file), g_api_names.load(), bound);
  if (parts->config.process_stats_ms > 0) {
    // CPU/state records of this process and its workers, host load (agent/host_stats). One per
    // trace, never freed (it must outlive the writer, which may outlive the process' exit path).
    HostStatsCollector::Options host_options;
    host_options.period_ms = static_cast<uint32_t>(parts->config.process_stats_ms);
    writer->AddContributor(new HostStatsCollector(host_options));
  }
  // Each device its kernels ran on, with the SM limits, as the CUDA driver describes it.
  writer->SetDeviceDescriber(&DescribeDevice);
  // NVTX ranges (agent/nvtx): one process-wide collector, drained by the current trace's writer.
  writer->AddContributor(&nvtx::NvtxCollector::Instance());
  // Wall-clock samples (agent/sampler): one per trace, never freed (it must outlive the writer).
  Sampler* sampler = nullptr;
  if (parts->config.sample_hz > 0) {
    sampler = new Sampler(&parts->pool, &parts->stacks, &g_python);
    writer->AddContributor(sampler);
  }
  {
    MutexLock lock(&parts->writer_mu);
    parts->writer = writer;
  }

  // A window records API calls from here on, before its capture source resumes: otherwise the
  // GPU work launched while the header is built would be in the trace without the calls that
  // launched it (read as lost host calls). The rings hold the records until the writer thread
  // starts; BeginWindow puts the state back to standby if the window fails to open. GPU work that
  // starts before the window's first millisecond is left out of it (SetFirstActivityNs): a call in
  // flight as the state changed is not recorded, and its kernel starts within microseconds of it
  // unless the thread is preempted; the cost is the GPU records (not the calls) of that millisecond.
  if (window > 0) {
    constexpr uint64_t kWindowStartGuardNs = 1'000'000;
    g_state.store(static_cast<int>(AgentState::kActive), std::memory_order_release);
    MutexLock lock(&parts->writer_mu);
    parts->writer->SetFirstActivityNs(MonotonicNs() + kWindowStartGuardNs);
  }

  // The capture source. Never in a child forked from an active parent: CUPTI can hang there.
  const char* forked_detail = "forked child of a CUDA process: CUPTI is not used after fork";
  const char* no_source_detail = "no capture source: host API calls only";
  if (!parts->source_created) {
    parts->source_created = true;
    if (!g_forked_from_active.load()) {
      if (CaptureSourceFactory factory = g_factory.load(); factory != nullptr) parts->source = factory(parts->config);
    }
    if (parts->source != nullptr) {
      MutexLock lock(&parts->control_mu);
      parts->source->Start(*parts->recorder);
    }
  } else if (parts->source != nullptr) {
    MutexLock lock(&parts->control_mu);
    if (!parts->source->Resume(*parts->recorder))
      parts->recorder->SetCaptureMode("host-only", "the capture source could not resume for this window");
  }
  if (parts->source == nullptr) {
    // Said again for every window: each trace's header carries its capture mode.
    if (g_forked_from_active.load()) parts->recorder->SetCaptureMode("interposition", forked_detail);
    else parts->recorder->SetCaptureMode("host-only", no_source_detail);
  }

  {
    MutexLock lock(&parts->writer_mu);
    pb::TraceHeader header = BuildTraceHeader(*parts, parts->host);
    header.mutable_capture()->set_sampling(sampler != nullptr);
    if (sampler != nullptr) header.mutable_capture()->set_sample_period_ns(1000000000ull / parts->config.sample_hz);
    if (window > 0) {
      pb::KeyValue* kv = header.add_settings();  // lower case: cannot clash with a GS_ name
      kv->set_key("capture_window");
      kv->set_value(std::to_string(window));
    }
    if (!parts->writer->Start(header)) {
      *why = "trace " + parts->output_path + ": " + parts->writer->error();
      if (window > 0) {
        delete parts->writer;
        parts->writer = nullptr;
      }
      return false;
    }
  }

  // The sampler starts before the writer thread that drains it: Start fills what DrainInto reads
  // (a sampler that could not start stays registered and simply has nothing to drain).
  if (sampler != nullptr) {
    SamplerOptions options;
    options.hz = parts->config.sample_hz;
    options.all_threads = parts->config.sample_all_threads;
    options.stack_depth = parts->config.stack_depth;
    options.blocked_stacks = parts->config.blocked_stacks;
    options.signals = parts->config.sample_signals;
    std::string note;
    if (sampler->Start(options, &note)) parts->sampler = sampler;
    if (!note.empty()) Log(LogLevel::kWarn, "%s", note.c_str());
  }

  if (parts->writer_owner == nullptr) parts->writer_owner = new WriterOwner(parts);
  if (!parts->writer_thread.Start(parts->writer, &parts->writer_mu,
                                  static_cast<uint32_t>(parts->config.flush_ms), parts->writer_owner)) {
    *why = "cannot start the writer thread";
    if (parts->sampler != nullptr) {
      parts->sampler->Stop();
      parts->sampler = nullptr;
    }
    if (window > 0) {
      MutexLock lock(&parts->writer_mu);
      parts->writer->Finish(pb::END_REASON_ERROR, *why);
      delete parts->writer;
      parts->writer = nullptr;
    }
    return false;
  }
  return true;
}

void CloseTrace(AgentParts* parts, pb::EndReason reason, const char* detail, bool final_trace,
                bool was_active) {
  if (was_active) {
    MutexLock lock(&parts->control_mu);
    if (parts->source != nullptr) {
      if (final_trace) {
        parts->source->Flush(true);
        parts->source->Stop();
      } else {
        parts->source->Pause();
      }
    }
  }
  if (parts->sampler != nullptr) {  // its last samples go out with the writer's final drain
    parts->sampler->Stop();
    parts->sampler = nullptr;
  }
  parts->writer_thread.Stop();
  parts->recorder->SetEnabled(false);
  MutexLock lock(&parts->writer_mu);
  if (parts->writer == nullptr) return;  // on demand, between windows
  if (!parts->writer->Finish(reason, detail) && was_active)
    Log(LogLevel::kWarn, "trace %s: %s; profiling disabled", parts->output_path.c_str(),
        parts->writer->error().c_str());
  else if (was_active)
    Log(LogLevel::kInfo, "trace written to %s (%llu bytes)", parts->output_path.c_str(),
        static_cast<unsigned long long>(parts->writer->bytes_written()));
}

}  // namespace core
}  // namespace gs
