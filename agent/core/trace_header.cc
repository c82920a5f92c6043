// trace_header.cc — see trace_header.h.
#include "agent/core/trace_header.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "agent/core/clock.h"
#include "agent/core/fork_gate.h"
#include "agent/core/process_info.h"
#include "agent/writer/trace_writer.h"
#include "agent/nvtx/nvtx_collector.h"
#include "proto/format.h"

#ifndef GS_AGENT_VERSION
#define GS_AGENT_VERSION "0.0.0"
#endif

namespace gs {
namespace core {

namespace pb = gpustall::trace;

namespace {

// Whether the process's blocking libc calls reach this library's wrappers (shim/, host_wait.def):
// only when LD_PRELOAD put the library ahead of libc. Loaded by CUDA_INJECTION64_PATH alone, it
// came after the application's references were bound to libc's functions.
// Asked as the program would: dlsym on the main program's handle searches the global scope (the
// executable, LD_PRELOAD's objects, then their dependencies). RTLD_DEFAULT from here would search
// this -Bsymbolic library first and always find our own wrapper.
bool HostWaitWrappersInterpose() {
  // The loader's lock: not across a fork (fork_gate.h; an on-demand window's header is built on the
  // control thread).
  MutexLock gate(&g_fork_gate);
  void* const program = dlopen(nullptr, RTLD_NOW | RTLD_NOLOAD);
  if (program == nullptr) return false;
  void* const nanosleep_in_use = dlsym(program, "nanosleep");
  dlclose(program);
  Dl_info in_use, ours;
  if (nanosleep_in_use == nullptr || dladdr(nanosleep_in_use, &in_use) == 0 ||
      dladdr(reinterpret_cast<void*>(&HostWaitWrappersInterpose), &ours) == 0) {
    return false;
  }
  return in_use.dli_fbase == ours.dli_fbase;
}

}  // namespace

pb::TraceHeader BuildTraceHeader(const AgentParts& parts, const std::string& host) {
  pb::TraceHeader h;
  h.set_schema_version(trace::kSchemaVersion);
  h.set_agent_version(GS_AGENT_VERSION);
  h.set_host_name(host);
  h.set_host_id(Trimmed(ReadSmallFile("/etc/machine-id")));
  h.set_boot_id(Trimmed(ReadSmallFile("/proc/sys/kernel/random/boot_id")));
  h.set_pid(parts.pid);
  h.set_ppid(getppid());
  const JobPlacement& job = parts.config.job;
  if (job.rank) h.set_rank(*job.rank);
  if (job.local_rank) h.set_local_rank(*job.local_rank);
  if (job.world_size) h.set_world_size(*job.world_size);
  if (job.local_world_size) h.set_local_world_size(*job.local_world_size);
  h.set_job_id(job.job_id);
  const std::string cmdline = ReadSmallFile("/proc/self/cmdline");
  for (size_t start = 0; start < cmdline.size();) {
    size_t end = cmdline.find('\0', start);
    if (end == std::string::npos) end = cmdline.size();
    h.add_command_line(cmdline.substr(start, end - start));
    start = end + 1;
  }
  // Realtime between two monotonic readings: uncertainty is half the window.
  const uint64_t m0 = MonotonicNs();
  const uint64_t real = ClockNs(CLOCK_REALTIME);
  const uint64_t boot = ClockNs(CLOCK_BOOTTIME);
  const uint64_t m1 = MonotonicNs();
  pb::ClockSnapshot* clock = h.mutable_start_clock();
  clock->set_monotonic_ns(m0 + (m1 - m0) / 2);
  clock->set_realtime_ns(real);
  clock->set_boottime_ns(boot);
  clock->set_uncertainty_ns((m1 - m0) / 2 + 1);
  pb::CaptureInfo* capture = h.mutable_capture();
  capture->set_native_stacks(parts.stacks.mode() != StackMode::kNone);
  capture->set_stack_depth(static_cast<uint32_t>(parts.config.stack_depth));
  capture->set_stack_method(parts.stacks.method_name());
  capture->set_python_stacks(g_python.enabled());
  // NVTX ranges reach the trace when NVTX was, or will be, injected into this agent.
  capture->set_nvtx(NvtxCaptureExpected());
  if (parts.config.host_waits) {
    if (HostWaitWrappersInterpose()) {
      capture->set_host_waits(true);
      capture->set_host_wait_min_ns(static_cast<uint64_t>(parts.config.wait_min_us) * 1000u);
    } else {
      capture->add_blind_spots("host waits: blocking libc calls are interposed only under LD_PRELOAD");
    }
  }
  RingRecorder::CaptureMode mode;
  if (parts.recorder->TakeCaptureMode(&mode)) WriteCaptureMode(mode, capture);
  for (const auto& [name, value] : DescribeConfig(parts.config)) {
    pb::KeyValue* kv = h.add_settings();
    kv->set_key(name);
    kv->set_value(value);
  }
  if (g_python.enabled()) {
    // CaptureInfo has no field for it (yet): a lower-case key cannot clash with a GS_ name.
    const PythonRuntimeInfo& py = g_python.runtime();
    pb::KeyValue* kv = h.add_settings();
    kv->set_key("python_version");
    kv->set_value("3." + std::to_string(py.minor) + "." + std::to_string(py.micro));
  }
  uint64_t id = 0;
  if (getrandom(&id, sizeof(id), GRND_NONBLOCK) != static_cast<ssize_t>(sizeof(id)))
    id = MonotonicNs() * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(parts.pid);
  h.set_trace_id(id);
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n > 0) h.set_executable(std::string(path, static_cast<size_t>(n)));
  if (getcwd(path, sizeof(path)) != nullptr) h.set_working_directory(path);
  return h;
}

}  // namespace core
}  // namespace gs
