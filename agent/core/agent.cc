// agent.cc — the one Agent: activation, the writer thread, exit/exec/fork.
//
// Why it looks the way it does:
// - Everything is created at activation with `new` and never deleted: at exit other threads may
//   still hold the Recorder, a CUPTI thread may still deliver a buffer, and a forked child must
//   leak what vanished threads were using. So there are no static objects with destructors here;
//   the globals are atomics and plain pointers.
// - The fast path of AgentRecorder() is one acquire load of the state word.
// - Lock order: control_mu (CaptureSource calls) before writer_mu (TraceWriter); the writer
//   thread never holds writer_mu while taking control_mu. Fork's prepare takes both, so the child
//   never inherits a half-written chunk or a CaptureSource call in progress.
#include "agent/core/agent.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>

#include "agent/core/clock.h"
#include "agent/control/control_socket.h"
#include "agent/control/run_folder.h"
#include "agent/control/window_path.h"
#include "agent/host_stats/host_stats_collector.h"
#include "agent/core/log.h"
#include "agent/nvtx/nvtx_collector.h"
#include "agent/nvtx/nvtx_injection.h"
#include "agent/core/output_path.h"
#include "agent/python/python_stacks.h"
#include "agent/record/ring_pool.h"
#include "agent/record/ring_recorder.h"
#include "agent/sampler/sampler.h"
#include "agent/stacks/stack_capture.h"
#include "agent/writer/trace_file.h"
#include "agent/writer/trace_writer.h"
#include "proto/format.h"

#ifndef GS_AGENT_VERSION
#define GS_AGENT_VERSION "0.0.0"
#endif

namespace gs {
namespace {

namespace pb = gpustall::trace;

// Everything one activation owns. Heap-allocated once, never freed (see the top of the file).
struct AgentParts {
  Config config;
  std::string output_path;
  int64_t pid = 0;
  RingPool pool;
  StackCapturer stacks;
  RingRecorder* recorder = nullptr;
  CaptureSource* source = nullptr;
  TraceWriter* writer = nullptr;
  Sampler* sampler = nullptr;  // the current trace's wall-clock sampler (GS_SAMPLE_HZ), if running
  std::mutex control_mu;  // serialises CaptureSource calls
  std::mutex writer_mu;   // serialises TraceWriter calls
  std::mutex stop_mu;
  std::condition_variable stop_cv;
  bool stop = false;      // guarded by stop_mu
  bool thread_started = false;
  pthread_t thread{};
  // The trace path GS_OUTPUT names (expanded at activation); output_path is the file being (or
  // last) written, which differs for on-demand windows and O_EXCL-numbered names.
  std::string base_path;
  std::string host;
  bool source_created = false;  // the factory ran (the source is built once per process image)
  // On-demand mode (GS_ON_DEMAND=1): the control listener and the capture windows. window_mu
  // serialises StartWindow/StopWindow/FinishRecording; lock order: window_mu, control_mu, writer_mu.
  control::ControlListener* listener = nullptr;
  std::mutex window_mu;
  int windows = 0;  // guarded by window_mu: windows opened so far
};

// The calling threads' Python frames (agent/python). Static storage, constant-initialised (no
// constructor runs, so no initialisation-order question with other libraries' constructors) and
// trivially destructible: it is never torn down (captures may race with exit), and a forked
// child inherits it as it is (Activate is idempotent; nothing to reset).
#if defined(__clang__)
[[clang::require_constant_initialization]]
#elif defined(__GNUC__) && __GNUC__ >= 10
__constinit
#endif
PythonStackReader g_python;
static_assert(std::is_trivially_destructible_v<PythonStackReader>,
              "the Python reader must survive exit without a destructor");

// The reader's log lines (it logs at most one per cause; a disabled reader says why once).
void LogPythonLine(const char* line) { GS_LOG_ONCE(LogLevel::kWarn, "%s", line); }

std::atomic<int> g_state{static_cast<int>(AgentState::kDormant)};
std::atomic<AgentParts*> g_parts{nullptr};
std::atomic<CaptureSourceFactory> g_factory{nullptr};
std::atomic<ApiNameFunction> g_api_names{nullptr};
// Set in a child forked from a process whose agent was active: CUPTI must not be used here.
std::atomic<bool> g_forked_from_active{false};
std::atomic<bool> g_process_hooks_installed{false};
std::atomic<bool> g_late_atexit_registered{false};
__attribute__((tls_model("initial-exec"))) thread_local bool t_activating = false;

// Preserves errno across the agent's slow paths.
class ErrnoSaver {
 public:
  ErrnoSaver() : saved_(errno) {}
  ~ErrnoSaver() { errno = saved_; }

 private:
  int saved_;
};

std::string ReadSmallFile(const char* path) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out;
  char buffer[4096];
  ssize_t n;
  while (out.size() < (1 << 20) && (n = read(fd, buffer, sizeof(buffer))) > 0) out.append(buffer, static_cast<size_t>(n));
  close(fd);
  return out;
}

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string HostName() {
  char host[HOST_NAME_MAX + 1] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) return "localhost";
  return host;
}

pb::TraceHeader BuildHeader(const AgentParts& parts, const std::string& host) {
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
  std::string mode, detail;
  if (parts.recorder->TakeCaptureMode(&mode, &detail)) {
    capture->set_mode(mode.rfind("cupti", 0) == 0           ? pb::CAPTURE_MODE_CUPTI
                      : mode.rfind("interposition", 0) == 0 ? pb::CAPTURE_MODE_INTERPOSITION
                                                            : pb::CAPTURE_MODE_HOST_ONLY);
    capture->set_mode_text(mode);
    capture->set_detail(detail);
  }
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

// Disables recording after an internal failure (one message; the application goes on).
void DisableAfterFailure(AgentParts* parts, const std::string& why) {
  int expected = static_cast<int>(AgentState::kActive);
  if (!g_state.compare_exchange_strong(expected, static_cast<int>(AgentState::kDisabled))) return;
  parts->recorder->SetEnabled(false);
  Log(LogLevel::kWarn, "%s; profiling disabled", why.c_str());
  std::lock_guard<std::mutex> lock(parts->control_mu);
  if (parts->source != nullptr) parts->source->Stop();
}

void AtExit();

void* WriterThreadMain(void* arg) {
  auto* parts = static_cast<AgentParts*>(arg);
  // Drain every 10 ms whatever GS_FLUSH_MS says: rings are sized for ~10 ms of a busy thread.
  constexpr auto kDrainPeriod = std::chrono::milliseconds(10);
  const uint64_t flush_ns = static_cast<uint64_t>(parts->config.flush_ms) * 1000000u;
  uint64_t last_flush = MonotonicNs();
  try {
    while (true) {
      {
        std::unique_lock<std::mutex> lock(parts->stop_mu);
        parts->stop_cv.wait_for(lock, kDrainPeriod, [parts] { return parts->stop; });
        if (parts->stop) break;
      }
      const uint64_t now = MonotonicNs();
      const bool flush_due = now - last_flush >= flush_ns;
      if (flush_due) {
        std::lock_guard<std::mutex> lock(parts->control_mu);
        if (parts->source != nullptr && g_state.load() == static_cast<int>(AgentState::kActive))
          parts->source->Flush(false);
      }
      std::string failure;
      {
        std::lock_guard<std::mutex> lock(parts->writer_mu);
        const size_t drained = parts->writer->Drain();
        if (drained > 0 && !g_late_atexit_registered.exchange(true)) {
          // Activation usually happens just BEFORE the first real CUDA call, so the runtime's own
          // atexit teardown gets registered after ours and would run first. Records drained here
          // mean a CUDA call has completed (the runtime is initialised): registering again now
          // makes our handler run before the runtime's teardown. AtExit is idempotent.
          atexit(&AtExit);
        }
        if (flush_due || parts->writer->chunk_full()) {
          parts->writer->FlushChunk();
          last_flush = now;
        }
        if (parts->writer->failed()) failure = parts->writer->error();
      }
      if (!failure.empty()) {
        DisableAfterFailure(parts, "trace " + parts->output_path + ": " + failure);
        break;
      }
    }
  } catch (...) {
    DisableAfterFailure(parts, "internal error in the writer thread");
  }
  return nullptr;
}

// Ends the trace being written: the capture source's last records (forced flush; then Stop at the
// end of the process image, Pause between on-demand windows), the writer thread, the TraceEnd
// frame. `was_active`: recording was on until now (not disabled after a failure).
void CloseTrace(AgentParts* parts, pb::EndReason reason, const char* detail, bool final_trace,
                bool was_active) {
  if (was_active) {
    std::lock_guard<std::mutex> lock(parts->control_mu);
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
  if (parts->thread_started) {
    {
      std::lock_guard<std::mutex> lock(parts->stop_mu);
      parts->stop = true;
    }
    parts->stop_cv.notify_all();
    pthread_join(parts->thread, nullptr);
    parts->thread_started = false;
    std::lock_guard<std::mutex> lock(parts->stop_mu);
    parts->stop = false;  // for the next on-demand window's writer thread
  }
  parts->recorder->SetEnabled(false);
  std::lock_guard<std::mutex> lock(parts->writer_mu);
  if (parts->writer == nullptr) return;  // on demand, between windows
  if (!parts->writer->Finish(reason, detail) && was_active)
    Log(LogLevel::kWarn, "trace %s: %s; profiling disabled", parts->output_path.c_str(),
        parts->writer->error().c_str());
  else if (was_active)
    Log(LogLevel::kInfo, "trace written to %s (%llu bytes)", parts->output_path.c_str(),
        static_cast<unsigned long long>(parts->writer->bytes_written()));
}

// Ends recording of this process image (exit or exec).
void FinishRecording(pb::EndReason reason, const char* detail) {
  AgentParts* parts = g_parts.load(std::memory_order_acquire);
  if (parts == nullptr || parts->pid != getpid()) return;
  if (parts->listener != nullptr) parts->listener->RemoveSocket();
  try {
    std::lock_guard<std::mutex> window_lock(parts->window_mu);
    int expected = static_cast<int>(AgentState::kActive);
    const bool was_active =
        g_state.compare_exchange_strong(expected, static_cast<int>(AgentState::kFinished));
    if (!was_active && expected == static_cast<int>(AgentState::kStandby)) {
      // On demand with no window open: nothing to write.
      g_state.compare_exchange_strong(expected, static_cast<int>(AgentState::kFinished));
      return;
    }
    if (!was_active && expected != static_cast<int>(AgentState::kDisabled)) return;
    CloseTrace(parts, reason, detail, /*final_trace=*/true, was_active);
  } catch (...) {
    // Never throw into the host's exit path.
  }
}

void AtExit() {
  ErrnoSaver saver;
  FinishRecording(pb::END_REASON_EXIT, "");
}

void ForkPrepare() {
  AgentParts* parts = g_parts.load(std::memory_order_acquire);
  if (parts == nullptr) return;
  parts->control_mu.lock();
  parts->writer_mu.lock();
}

void ForkParent() {
  AgentParts* parts = g_parts.load(std::memory_order_acquire);
  if (parts == nullptr) return;
  parts->writer_mu.unlock();
  parts->control_mu.unlock();
}

void ForkChild() {
  // Only this thread survives; the writer thread and CUPTI's threads are gone. Reset to dormant
  // and leak the parent's parts: the child writes its own file if it ever records.
  AgentParts* parts = g_parts.load(std::memory_order_acquire);
  if (parts != nullptr) {
    parts->writer_mu.unlock();
    parts->control_mu.unlock();
    const int state = g_state.load();
    if (state == static_cast<int>(AgentState::kActive)) {
      g_forked_from_active.store(true);
      parts->recorder->SetEnabled(false);
      if (parts->source != nullptr) parts->source->OnForkChild();
    } else if (state == static_cast<int>(AgentState::kStandby) && parts->source != nullptr) {
      g_forked_from_active.store(true);  // CUPTI was subscribed (paused): same hazard
      parts->source->OnForkChild();
    }
    if (parts->listener != nullptr) parts->listener->OnForkChild();
  }
  g_parts.store(nullptr, std::memory_order_release);
  g_state.store(static_cast<int>(AgentState::kDormant), std::memory_order_release);
}

// atexit now, i.e. after CUDA started (handlers run in reverse order: ours runs before CUDA's
// own teardown). Once per process: a forked child inherits both registrations.
void InstallProcessHooks() {
  if (!g_process_hooks_installed.exchange(true)) {
    atexit(&AtExit);
    pthread_atfork(&ForkPrepare, &ForkParent, &ForkChild);
  }
}

// Starts a trace at `path` (O_EXCL, numbered if taken): the file and its writer, the capture
// source (built and started on first use; resumed for a later on-demand window), the header, the
// writer thread. `window` > 0 numbers an on-demand window (written into the header). Once at
// activation, and once per on-demand window. False with *why when the trace cannot start; on
// demand, nothing of the failed window stays behind but the source, which the caller pauses.
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
  // NVTX ranges (agent/nvtx): one process-wide collector, drained by the current trace's writer.
  writer->AddContributor(&nvtx::NvtxCollector::Instance());
  // Wall-clock samples (agent/sampler): one per trace, never freed (it must outlive the writer).
  Sampler* sampler = nullptr;
  if (parts->config.sample_hz > 0) {
    sampler = new Sampler(&parts->pool, &parts->stacks, &g_python);
    writer->AddContributor(sampler);
  }
  {
    std::lock_guard<std::mutex> lock(parts->writer_mu);
    parts->writer = writer;
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
      std::lock_guard<std::mutex> lock(parts->control_mu);
      parts->source->Start(*parts->recorder);
    }
  } else if (parts->source != nullptr) {
    std::lock_guard<std::mutex> lock(parts->control_mu);
    if (!parts->source->Resume(*parts->recorder))
      parts->recorder->SetCaptureMode("host-only", "the capture source could not resume for this window");
  }
  if (parts->source == nullptr) {
    // Said again for every window: each trace's header carries its capture mode.
    if (g_forked_from_active.load()) parts->recorder->SetCaptureMode("interposition", forked_detail);
    else parts->recorder->SetCaptureMode("host-only", no_source_detail);
  }

  {
    std::lock_guard<std::mutex> lock(parts->writer_mu);
    pb::TraceHeader header = BuildHeader(*parts, parts->host);
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
    std::string note;
    if (sampler->Start(options, &note)) parts->sampler = sampler;
    if (!note.empty()) Log(LogLevel::kWarn, "%s", note.c_str());
  }

  // The writer thread gets no signals: they belong to the application's threads.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const int rc = pthread_create(&parts->thread, nullptr, &WriterThreadMain, parts);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (rc != 0) {
    *why = "cannot start the writer thread";
    if (parts->sampler != nullptr) {
      parts->sampler->Stop();
      parts->sampler = nullptr;
    }
    if (window > 0) {
      std::lock_guard<std::mutex> lock(parts->writer_mu);
      parts->writer->Finish(pb::END_REASON_ERROR, *why);
      delete parts->writer;
      parts->writer = nullptr;
    }
    return false;
  }
  parts->thread_started = true;
  pthread_setname_np(parts->thread, "gpustall-writer");
  return true;
}

void EnterStandby(AgentParts* parts);

// The activation proper. Runs once per process image (and once more in a forked child).
void Activate() {
  const ConfigResult parsed = ParseConfig([](const char* name) -> const char* { return getenv(name); });
  if (!parsed.ok()) {
    Log(LogLevel::kWarn, "%s", parsed.error.c_str());
    g_state.store(static_cast<int>(AgentState::kDisabled), std::memory_order_release);
    return;
  }
  const Config& config = parsed.config;
  SetLogLevel(config.log);
  if (!config.recording_wanted()) {
    g_state.store(static_cast<int>(AgentState::kDisabled), std::memory_order_release);
    return;
  }
  auto* parts = new AgentParts();
  parts->config = config;
  parts->pid = getpid();
  auto give_up = [&](const std::string& why) {
    Log(LogLevel::kWarn, "%s; profiling disabled", why.c_str());
    g_state.store(static_cast<int>(AgentState::kDisabled), std::memory_order_release);
    // `parts` is leaked on purpose once a CaptureSource may hold its recorder (see below).
  };

  // Memory bound: 7/8 for the per-thread rings, 1/8 for waiting GPU records (two vectors).
  const uint64_t bound = static_cast<uint64_t>(config.buffer_mb) << 20;
  if (!parts->pool.Init(bound / 8 * 7)) return give_up("cannot map " + std::to_string(bound >> 20) + " MiB of ring buffers");
  std::string note;
  parts->stacks.Init(config.stacks, &note);
  if (!note.empty()) Log(LogLevel::kWarn, "%s", note.c_str());
  const size_t activity_capacity = bound / 8 / 2 / sizeof(PendingActivity);
  // Python frames: finds the interpreter if this is CPython (silent and free otherwise).
  PythonStackReader::Options python_options;
  python_options.log = &LogPythonLine;
  g_python.Activate(python_options);
  parts->recorder = new RingRecorder(&parts->pool, &parts->stacks, config.stack_depth, activity_capacity,
                                     &g_python);

  parts->host = HostName();
  OutputPathFacts facts;
  facts.pid = parts->pid;
  facts.host = parts->host;
  facts.rank = config.job.rank;
  facts.start_unix_seconds = static_cast<int64_t>(time(nullptr));
  facts.forked_child = g_forked_from_active.load();
  parts->base_path = ExpandOutputPath(config.output, facts);
  parts->output_path = parts->base_path;

  if (config.on_demand) return EnterStandby(parts);
  std::string why;
  if (!OpenTrace(parts, parts->base_path, 0, &why)) {
    if (!parts->source_created) {
      // The file could not be created: nothing but this thread has seen `parts` (no capture
      // source, no writer), so it goes. The ring mapping stays (never unmapped; untouched pages).
      delete parts->recorder;
      delete parts;
    }
    return give_up(why);
  }
  InstallProcessHooks();
  g_parts.store(parts, std::memory_order_release);
  g_state.store(static_cast<int>(AgentState::kActive), std::memory_order_release);
  Log(LogLevel::kInfo, "recording to %s", parts->output_path.c_str());
}

// --- On demand (GS_ON_DEMAND=1): dormant until gsctl opens a capture window -------------------
// Activation builds everything cheap (config, rings, stack capturer) and starts the control
// listener (agent/control/); the state is kStandby, so every intercepted call passes straight
// through (AgentRecorder() returns nullptr) and nothing else runs: no CUPTI, no writer thread, no
// file. A window is OpenTrace..CloseTrace of its own numbered file; in between the source pauses.

const char* StateName(int state) {
  switch (static_cast<AgentState>(state)) {
    case AgentState::kDormant: return "dormant";
    case AgentState::kActivating: return "activating";
    case AgentState::kActive: return "recording";
    case AgentState::kDisabled: return "disabled";
    case AgentState::kFinished: return "finished";
    case AgentState::kStandby: return "standby";
  }
  return "unknown";
}

// Records that threads left in their rings between windows (a call that was in flight when the
// last window stopped) belong to no window: dropped before the next one starts. Called with no
// writer thread running (the rings' single consumer).
void DiscardStaleRecords(RingRecorder* recorder) {
  RingPool& pool = recorder->pool();
  for (size_t i = 0; i < pool.ring_count(); ++i) {
    ThreadRing& ring = pool.ring(i);
    const int state = ring.state.load(std::memory_order_acquire);
    if (state != ThreadRing::kOwned && state != ThreadRing::kExited) continue;
    ring.ring.Drain([](const RingRecordHeader&) {});
    if (state == ThreadRing::kExited) RingPool::Recycle(&ring);
  }
  std::vector<PendingActivity> stale;
  recorder->activities().TakeAll(&stale);
}

bool StartWindow(std::string* facts, std::string* error) {
  AgentParts* parts = g_parts.load(std::memory_order_acquire);
  if (parts == nullptr || parts->pid != getpid()) {
    *error = "the agent is not active in this process";
    return false;
  }
  std::lock_guard<std::mutex> window_lock(parts->window_mu);
  const int state = g_state.load(std::memory_order_acquire);
  if (state == static_cast<int>(AgentState::kActive)) {
    *error = "window " + std::to_string(parts->windows) + " is already recording to " + parts->output_path;
    return false;
  }
  if (state != static_cast<int>(AgentState::kStandby)) {
    *error = std::string("profiling is ") + StateName(state) + " in this process";
    return false;
  }
  const int window = parts->windows + 1;
  DiscardStaleRecords(parts->recorder);
  parts->recorder->SetEnabled(true);
  nvtx::NvtxCollector::Instance().SetBetweenWindows(false);
  std::string why;
  if (!OpenTrace(parts, control::WindowTracePath(parts->base_path, window), window, &why)) {
    parts->recorder->SetEnabled(false);
    nvtx::NvtxCollector::Instance().SetBetweenWindows(true);
    {
      std::lock_guard<std::mutex> lock(parts->control_mu);
      if (parts->source != nullptr) parts->source->Pause();
    }
    Log(LogLevel::kWarn, "capture window %d not started: %s", window, why.c_str());
    *error = why;
    return false;
  }
  parts->windows = window;
  g_state.store(static_cast<int>(AgentState::kActive), std::memory_order_release);
  Log(LogLevel::kInfo, "capture window %d: recording to %s", window, parts->output_path.c_str());
  *facts = "window=" + std::to_string(window) + " trace=" + parts->output_path;
  return true;
}

bool StopWindow(std::string* facts, std::string* error) {
  AgentParts* parts = g_parts.load(std::memory_order_acquire);
  if (parts == nullptr || parts->pid != getpid()) {
    *error = "the agent is not active in this process";
    return false;
  }
  std::lock_guard<std::mutex> window_lock(parts->window_mu);
  int expected = static_cast<int>(AgentState::kActive);
  if (!g_state.compare_exchange_strong(expected, static_cast<int>(AgentState::kStandby))) {
    *error = expected == static_cast<int>(AgentState::kStandby)
                 ? std::string("no capture window is recording")
                 : std::string("profiling is ") + StateName(expected) + " in this process";
    return false;
  }
  nvtx::NvtxCollector::Instance().SetBetweenWindows(true);
  CloseTrace(parts, pb::END_REASON_STOPPED, "capture window stopped", /*final_trace=*/false,
             /*was_active=*/true);
  std::lock_guard<std::mutex> lock(parts->writer_mu);
  *facts = "window=" + std::to_string(parts->windows) + " trace=" + parts->output_path +
           " bytes=" + std::to_string(parts->writer->bytes_written());
  const bool ok = !parts->writer->failed();
  if (!ok) *error = "trace " + parts->output_path + ": " + parts->writer->error();
  // The writer thread is joined and the file closed: nothing else holds the writer now.
  delete parts->writer;
  parts->writer = nullptr;
  return ok;
}

class AgentWindows final : public control::WindowController {
 public:
  bool StartWindow(std::string* facts, std::string* error) override { return gs::StartWindow(facts, error); }
  bool StopWindow(std::string* facts, std::string* error) override { return gs::StopWindow(facts, error); }
  std::string Status() override {
    AgentParts* parts = g_parts.load(std::memory_order_acquire);
    std::string out = std::string("state=") + StateName(g_state.load(std::memory_order_acquire));
    if (parts == nullptr) return out;
    std::lock_guard<std::mutex> window_lock(parts->window_mu);
    out += " windows=" + std::to_string(parts->windows);
    if (parts->windows > 0) out += " trace=" + parts->output_path;
    return out;
  }
};

// One word for a key=value reply (no spaces or control characters; "-" when empty).
std::string ReplyWord(std::string text) {
  if (text.empty()) return "-";
  for (char& c : text)
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) c = '_';
  return text;
}

void EnterStandby(AgentParts* parts) {
  parts->recorder->SetEnabled(false);
  nvtx::NvtxCollector::Instance().SetBetweenWindows(true);
  const JobPlacement& job = parts->config.job;
  std::string command = ReadSmallFile("/proc/self/cmdline");
  if (command.size() > 512) command.resize(512);
  for (char& c : command)
    if (c == '\0') c = ' ';
    else if (static_cast<unsigned char>(c) < ' ' || c == 0x7f) c = '?';
  control::ControlListener::Options options;
  // Not a GS_* setting: where the user's session keeps runtime files (read here, once).
  options.folder = control::RunFolderPath(getenv("XDG_RUNTIME_DIR"), geteuid());
  options.uid = geteuid();
  options.pid = static_cast<pid_t>(parts->pid);
  options.identity = "pid=" + std::to_string(parts->pid) + " job=" + ReplyWord(job.job_id) +
                     " rank=" + (job.rank ? std::to_string(*job.rank) : "-") +
                     " local_rank=" + (job.local_rank ? std::to_string(*job.local_rank) : "-") +
                     " command=" + Trimmed(command);
  // Both never freed: the listener thread may still be serving while static destructors run.
  auto* windows = new AgentWindows();
  parts->listener = new control::ControlListener();
  std::string error;
  if (!parts->listener->Start(options, windows, &error)) {
    Log(LogLevel::kWarn, "on-demand capture unavailable: %s; profiling disabled", error.c_str());
    g_state.store(static_cast<int>(AgentState::kDisabled), std::memory_order_release);
    return;  // `parts` leaked, as on every failed activation
  }
  InstallProcessHooks();
  g_parts.store(parts, std::memory_order_release);
  g_state.store(static_cast<int>(AgentState::kStandby), std::memory_order_release);
  Log(LogLevel::kInfo, "on demand: waiting for gsctl on %s", parts->listener->socket_path().c_str());
}

Recorder* ActivateSlow() {
  ErrnoSaver saver;
  int state = g_state.load(std::memory_order_acquire);
  if (state == static_cast<int>(AgentState::kDormant)) {
    int expected = state;
    if (g_state.compare_exchange_strong(expected, static_cast<int>(AgentState::kActivating))) {
      t_activating = true;
      try {
        Activate();
      } catch (...) {
        Log(LogLevel::kWarn, "internal error during activation; profiling disabled");
        g_state.store(static_cast<int>(AgentState::kDisabled), std::memory_order_release);
      }
      t_activating = false;
    }
    state = g_state.load(std::memory_order_acquire);
  }
  if (state == static_cast<int>(AgentState::kActivating)) {
    // Another thread is activating: wait (bounded) so its calls are not lost. The activating
    // thread itself (a CUDA call made while starting CUPTI) records nothing.
    if (t_activating) return nullptr;
    const uint64_t deadline = MonotonicNs() + 5000000000ull;
    while ((state = g_state.load(std::memory_order_acquire)) == static_cast<int>(AgentState::kActivating) &&
           MonotonicNs() < deadline) {
      sched_yield();
    }
  }
  if (state != static_cast<int>(AgentState::kActive)) return nullptr;
  AgentParts* parts = g_parts.load(std::memory_order_acquire);
  return parts != nullptr ? parts->recorder : nullptr;
}

}  // namespace

void AgentSetCaptureSourceFactory(CaptureSourceFactory factory) { g_factory.store(factory); }
void AgentSetApiNameFunction(ApiNameFunction names) { g_api_names.store(names); }

Recorder* AgentRecorder() {
  const int state = g_state.load(std::memory_order_acquire);
  if (__builtin_expect(state == static_cast<int>(AgentState::kActive), 1)) {
    // g_parts was published before the state.
    return g_parts.load(std::memory_order_relaxed)->recorder;
  }
  if (state == static_cast<int>(AgentState::kStandby)) return nullptr;  // on demand, between windows
  return ActivateSlow();
}

int AgentInitializeInjection() {
  ErrnoSaver saver;
  AgentRecorder();
  return 1;
}

void AgentBeforeExec() {
  ErrnoSaver saver;
  FinishRecording(pb::END_REASON_EXEC, "exec");
}

AgentState AgentCurrentState() { return static_cast<AgentState>(g_state.load(std::memory_order_acquire)); }

}  // namespace gs
