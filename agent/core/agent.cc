// agent.cc — the activation state machine (agent.h's diagram): lazy activation on the first CUDA
// call, the one-load fast path of AgentRecorder(), disabling after a failure, and the entry points
// the shim forwards. The other jobs of the one Agent sit beside it: trace_session.cc opens and
// closes traces, trace_header.cc describes the process, process_hooks.cc handles exit, exec and
// fork, on_demand.cc the standby of GS_ON_DEMAND=1; agent_parts.h says what they share and why
// nothing here is ever freed.
#include "agent/core/agent.h"

#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <type_traits>

#include "agent/core/agent_parts.h"
#include "agent/core/clock.h"
#include "agent/core/log.h"
#include "agent/core/config/output_path.h"
#include "agent/core/process_info.h"

namespace gs {
namespace core {

std::atomic<int> g_state{static_cast<int>(AgentState::kDormant)};
std::atomic<AgentParts*> g_parts{nullptr};
std::atomic<CaptureSourceFactory> g_factory{nullptr};
std::atomic<ApiNameFunction> g_api_names{nullptr};
std::atomic<bool> g_forked_from_active{false};

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

void DisableAfterFailure(AgentParts* parts, const std::string& why) {
  int expected = static_cast<int>(AgentState::kActive);
  if (!g_state.compare_exchange_strong(expected, static_cast<int>(AgentState::kDisabled))) return;
  parts->recorder->SetEnabled(false);
  Log(LogLevel::kWarn, "%s; profiling disabled", why.c_str());
  MutexLock lock(&parts->control_mu);
  if (parts->source != nullptr) parts->source->Stop();
}

namespace {

__attribute__((tls_model("initial-exec"))) thread_local bool t_activating = false;

// The reader's log lines (it logs at most one per cause; a disabled reader says why once).
void LogPythonLine(const char* line) { GS_LOG_ONCE(LogLevel::kWarn, "%s", line); }

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

  // The clock every record is stamped with (clock.h): the TSC where it is safe, from here on.
  if (const char* why = StartTscClock(config.clock == ClockSource::kAuto); why != nullptr && config.clock == ClockSource::kAuto)
    Log(LogLevel::kInfo, "timestamps from clock_gettime: %s", why);

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

  if (config.periodic_ms != 0 && !PeriodicWindows(config))
    Log(LogLevel::kWarn, "GS_PERIODIC_WINDOW_MS=%d is not shorter than GS_PERIODIC_MS=%d: recording continuously",
        config.periodic_window_ms, config.periodic_ms);
  if (config.on_demand || PeriodicWindows(config)) return EnterStandby(parts);
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
}  // namespace core

using core::g_api_names;
using core::g_factory;
using core::g_parts;
using core::g_state;
using core::AgentParts;
using core::ErrnoSaver;

void AgentSetCaptureSourceFactory(CaptureSourceFactory factory) { g_factory.store(factory); }
void AgentSetApiNameFunction(ApiNameFunction names) { g_api_names.store(names); }

Recorder* AgentRecorder() {
  const int state = g_state.load(std::memory_order_acquire);
  if (__builtin_expect(state == static_cast<int>(AgentState::kActive), 1)) {
    // g_parts was published before the state.
    return g_parts.load(std::memory_order_relaxed)->recorder;
  }
  if (state == static_cast<int>(AgentState::kStandby)) return nullptr;  // on demand, between windows
  return core::ActivateSlow();
}

Recorder* AgentRecorderIfActive() {
  if (g_state.load(std::memory_order_acquire) != static_cast<int>(AgentState::kActive)) return nullptr;
  return g_parts.load(std::memory_order_relaxed)->recorder;  // published before the state
}

int AgentInitializeInjection() {
  ErrnoSaver saver;
  AgentRecorder();
  return 1;
}

void AgentBeforeExec() {
  ErrnoSaver saver;
  core::FinishRecording(gpustall::trace::END_REASON_EXEC, "exec");
}

AgentState AgentCurrentState() { return static_cast<AgentState>(g_state.load(std::memory_order_acquire)); }

}  // namespace gs
