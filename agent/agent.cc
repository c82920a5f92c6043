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
#include "agent/agent.h"

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

#include "agent/clock.h"
#include "agent/log.h"
#include "agent/output_path.h"
#include "agent/python/python_stacks.h"
#include "agent/ring_pool.h"
#include "agent/ring_recorder.h"
#include "agent/stack_capture.h"
#include "agent/trace_file.h"
#include "agent/trace_writer.h"
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
  std::mutex control_mu;  // serialises CaptureSource calls
  std::mutex writer_mu;   // serialises TraceWriter calls
  std::mutex stop_mu;
  std::condition_variable stop_cv;
  bool stop = false;      // guarded by stop_mu
  bool thread_started = false;
  pthread_t thread{};
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

// Ends recording of this process image (exit or exec).
void FinishRecording(pb::EndReason reason, const char* detail) {
  AgentParts* parts = g_parts.load(std::memory_order_acquire);
  if (parts == nullptr || parts->pid != getpid()) return;
  int expected = static_cast<int>(AgentState::kActive);
  const bool was_active =
      g_state.compare_exchange_strong(expected, static_cast<int>(AgentState::kFinished));
  if (!was_active && expected != static_cast<int>(AgentState::kDisabled)) return;
  try {
    if (was_active) {
      std::lock_guard<std::mutex> lock(parts->control_mu);
      if (parts->source != nullptr) {
        parts->source->Flush(true);
        parts->source->Stop();
      }
    }
    if (parts->thread_started) {
      {
        std::lock_guard<std::mutex> lock(parts->stop_mu);
        parts->stop = true;
      }
      parts->stop_cv.notify_all();
      pthread_join(parts->thread, nullptr);
      parts->thread_started = false;
    }
    parts->recorder->SetEnabled(false);
    std::lock_guard<std::mutex> lock(parts->writer_mu);
    if (!parts->writer->Finish(reason, detail) && was_active)
      Log(LogLevel::kWarn, "trace %s: %s; profiling disabled", parts->output_path.c_str(),
          parts->writer->error().c_str());
    else if (was_active)
      Log(LogLevel::kInfo, "trace written to %s (%llu bytes)", parts->output_path.c_str(),
          static_cast<unsigned long long>(parts->writer->bytes_written()));
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
    }
  }
  g_parts.store(nullptr, std::memory_order_release);
  g_state.store(static_cast<int>(AgentState::kDormant), std::memory_order_release);
}

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
    // `parts` is leaked on purpose: a CaptureSource may already hold its recorder.
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

  const std::string host = HostName();
  OutputPathFacts facts;
  facts.pid = parts->pid;
  facts.host = host;
  facts.rank = config.job.rank;
  facts.start_unix_seconds = static_cast<int64_t>(time(nullptr));
  facts.forked_child = g_forked_from_active.load();
  parts->output_path = ExpandOutputPath(config.output, facts);
  std::string error;
  std::unique_ptr<TraceFile> file = CreateTraceFile(parts->output_path, &error, &parts->output_path);
  if (file == nullptr) return give_up("cannot create trace file " + parts->output_path + ": " + error);
  parts->writer = new TraceWriter(parts->recorder, std::move(file), g_api_names.load(), bound);

  // The capture source. Never in a child forked from an active parent: CUPTI can hang there.
  if (g_forked_from_active.load()) {
    parts->recorder->SetCaptureMode("interposition",
                                    "forked child of a CUDA process: CUPTI is not used after fork");
  } else if (CaptureSourceFactory factory = g_factory.load(); factory != nullptr) {
    parts->source = factory(config);
  }
  if (parts->source != nullptr) {
    std::lock_guard<std::mutex> lock(parts->control_mu);
    parts->source->Start(*parts->recorder);
  } else if (!g_forked_from_active.load()) {
    parts->recorder->SetCaptureMode("host-only", "no capture source: host API calls only");
  }

  {
    std::lock_guard<std::mutex> lock(parts->writer_mu);
    if (!parts->writer->Start(BuildHeader(*parts, host)))
      return give_up("trace " + parts->output_path + ": " + parts->writer->error());
  }

  // The writer thread gets no signals: they belong to the application's threads.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const int rc = pthread_create(&parts->thread, nullptr, &WriterThreadMain, parts);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (rc != 0) return give_up("cannot start the writer thread");
  parts->thread_started = true;
  pthread_setname_np(parts->thread, "gpustall-writer");

  // atexit now, i.e. after CUDA started (handlers run in reverse order: ours runs before CUDA's
  // own teardown). Once per process: a forked child inherits both registrations.
  if (!g_process_hooks_installed.exchange(true)) {
    atexit(&AtExit);
    pthread_atfork(&ForkPrepare, &ForkParent, &ForkChild);
  }
  g_parts.store(parts, std::memory_order_release);
  g_state.store(static_cast<int>(AgentState::kActive), std::memory_order_release);
  Log(LogLevel::kInfo, "recording to %s", parts->output_path.c_str());
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
  if (__builtin_expect(g_state.load(std::memory_order_acquire) == static_cast<int>(AgentState::kActive), 1)) {
    // g_parts was published before the state.
    return g_parts.load(std::memory_order_relaxed)->recorder;
  }
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
