// on_demand.cc — GS_ON_DEMAND=1: dormant until gsctl opens a capture window; GS_PERIODIC_MS:
// dormant between the windows the control listener opens on its own clock.
//
// Activation builds everything cheap (config, rings, stack capturer) and starts the control
// listener (agent/control/); the state is kStandby, so every intercepted call passes straight
// through (AgentRecorder() returns nullptr) and nothing else runs: no CUPTI, no writer thread, no
// file. A window (agent/control/capture_windows.h) is OpenTrace..CloseTrace of its own numbered
// file; in between the source pauses. This file is the recording side of a window: the state
// word's standby <-> active edges and the trace they open and close.
#include <stdlib.h>
#include <unistd.h>

#include <string>

#include "agent/control/run_folder.h"
#include "agent/control/window_path.h"
#include "agent/core/agent_parts.h"
#include "agent/core/log.h"
#include "agent/core/process_info.h"
#include "agent/nvtx/nvtx_collector.h"

namespace gs {
namespace core {
namespace {

namespace pb = gpustall::trace;
using control::WindowedRecording;

class AgentWindowedRecording final : public WindowedRecording {
 public:
  bool InThisProcess() override {
    AgentParts* parts = g_parts.load(std::memory_order_acquire);
    return parts != nullptr && parts->pid == getpid();
  }

  State state(const char** name) override {
    const int state = g_state.load(std::memory_order_acquire);
    *name = StateName(state);
    if (state == static_cast<int>(AgentState::kActive)) return State::kRecording;
    if (state == static_cast<int>(AgentState::kStandby)) return State::kStandby;
    return State::kOther;
  }

  std::string trace_path() override { return parts()->output_path; }

  bool BeginWindow(int window, std::string* why) override {
    AgentParts* parts = this->parts();
    parts->recorder->DiscardPending();
    parts->recorder->SetEnabled(true);
    nvtx::NvtxCollector::Instance().SetBetweenWindows(false);
    if (!OpenTrace(parts, control::WindowTracePath(parts->base_path, window), window, why)) {
      g_state.store(static_cast<int>(AgentState::kStandby), std::memory_order_release);
      parts->recorder->SetEnabled(false);
      nvtx::NvtxCollector::Instance().SetBetweenWindows(true);
      {
        MutexLock lock(&parts->control_mu);
        if (parts->source != nullptr) parts->source->Pause();
      }
      Log(LogLevel::kWarn, "capture window %d not started: %s", window, why->c_str());
      return false;
    }
    g_state.store(static_cast<int>(AgentState::kActive), std::memory_order_release);
    Log(LogLevel::kInfo, "capture window %d: recording to %s", window, parts->output_path.c_str());
    return true;
  }

  bool StopRecording(State* found, const char** name) override {
    int expected = static_cast<int>(AgentState::kActive);
    if (g_state.compare_exchange_strong(expected, static_cast<int>(AgentState::kStandby))) return true;
    *name = StateName(expected);
    *found = expected == static_cast<int>(AgentState::kStandby) ? State::kStandby : State::kOther;
    return false;
  }

  bool EndWindowTrace(uint64_t* bytes, std::string* error) override {
    AgentParts* parts = this->parts();
    nvtx::NvtxCollector::Instance().SetBetweenWindows(true);
    CloseTrace(parts, pb::END_REASON_STOPPED, "capture window stopped", /*final_trace=*/false,
               /*was_active=*/true);
    MutexLock lock(&parts->writer_mu);
    *bytes = parts->writer->bytes_written();
    const bool ok = !parts->writer->failed();
    if (!ok) *error = parts->writer->error();
    // The writer thread is joined and the file closed: nothing else holds the writer now.
    delete parts->writer;
    parts->writer = nullptr;
    return ok;
  }

 private:
  // The windows run in the process whose agent is active (InThisProcess was asked first).
  static AgentParts* parts() { return g_parts.load(std::memory_order_acquire); }
};

// One word for a key=value reply (no spaces or control characters; "-" when empty).
std::string ReplyWord(std::string text) {
  if (text.empty()) return "-";
  for (char& c : text)
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) c = '_';
  return text;
}

}  // namespace

bool PeriodicWindows(const Config& config) {
  return config.periodic_ms != 0 && config.periodic_window_ms < config.periodic_ms;
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
  const Config& config = parts->config;
  const bool periodic = PeriodicWindows(config);
  if (periodic) {
    options.periodic_ns = static_cast<uint64_t>(config.periodic_ms) * 1000000u;
    options.periodic_window_ns = static_cast<uint64_t>(config.periodic_window_ms) * 1000000u;
  }
  options.identity = "pid=" + std::to_string(parts->pid) + " job=" + ReplyWord(job.job_id) +
                     " rank=" + (job.rank ? std::to_string(*job.rank) : "-") +
                     " local_rank=" + (job.local_rank ? std::to_string(*job.local_rank) : "-") +
                     " command=" + Trimmed(command);
  // All never freed: the listener thread may still be serving while static destructors run.
  auto* windows = new control::CaptureWindows(new AgentWindowedRecording(), &parts->window_mu);
  parts->listener = new control::ControlListener();
  // Published before the listener starts: its thread opens the first periodic window at once,
  // and a window needs the agent's parts in standby (CaptureWindows refuses it otherwise).
  g_parts.store(parts, std::memory_order_release);
  g_state.store(static_cast<int>(AgentState::kStandby), std::memory_order_release);
  std::string error;
  if (!parts->listener->Start(options, windows, &error)) {
    Log(LogLevel::kWarn, "%s unavailable: %s; profiling disabled",
        periodic ? "periodic capture windows" : "on-demand capture", error.c_str());
    g_state.store(static_cast<int>(AgentState::kDisabled), std::memory_order_release);
    g_parts.store(nullptr, std::memory_order_release);
    return;  // `parts` leaked, as on every failed activation
  }
  InstallProcessHooks();
  if (periodic)
    Log(LogLevel::kInfo, "periodic: a %d ms window every %d ms; gsctl on %s", config.periodic_window_ms,
        config.periodic_ms, parts->listener->socket_path().c_str());
  else
    Log(LogLevel::kInfo, "on demand: waiting for gsctl on %s", parts->listener->socket_path().c_str());
}

}  // namespace core
}  // namespace gs
