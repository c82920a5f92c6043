// agent_parts.h — what one activation of the agent owns, and the process-wide words around it.
// Internal to agent/core: agent.cc (the state machine), trace_session.cc (trace open/close),
// process_hooks.cc (exit, exec, fork) and on_demand.cc (standby and capture windows) share it.
//
// Why it looks the way it does:
// - Everything is created at activation with `new` and never deleted: at exit other threads may
//   still hold the Recorder, a CUPTI thread may still deliver a buffer, and a forked child must
//   leak what vanished threads were using. So there are no static objects with destructors here;
//   the globals are atomics and plain pointers.
// - Lock order (written below as thread-safety annotations): window_mu (capture windows, end of
//   recording), then control_mu (CaptureSource calls), then writer_mu (TraceWriter calls). The
//   writer thread never holds writer_mu while taking control_mu. Fork's prepare takes control_mu
//   and the fork gate (fork_gate.h: a leaf, held only around short libc/loader calls), not
//   writer_mu: the writer holds that across whole drains and writes, and the child leaks the
//   parent's writer anyway (process_hooks.cc).
#ifndef GPUSTALL_AGENT_CORE_AGENT_PARTS_H_
#define GPUSTALL_AGENT_CORE_AGENT_PARTS_H_

#include <errno.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "agent/capture/capture_source.h"
#include "agent/control/capture_windows.h"
#include "agent/control/control_socket.h"
#include "agent/core/agent.h"
#include "agent/core/config/config.h"
#include "agent/core/mutex.h"
#include "agent/python/python_stacks.h"
#include "agent/record/ring_pool.h"
#include "agent/record/ring_recorder.h"
#include "agent/sampler/sampler.h"
#include "agent/stacks/stack_capture.h"
#include "agent/writer/trace_writer.h"
#include "agent/writer/writer_thread.h"
#include "proto/gstrace.pb.h"

namespace gs {
namespace core {

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
  // Serialises capture windows against each other and against the end of recording.
  Mutex window_mu;
  Mutex control_mu GS_ACQUIRED_AFTER(window_mu);  // serialises CaptureSource calls
  Mutex writer_mu GS_ACQUIRED_AFTER(control_mu);  // serialises TraceWriter calls
  WriterThread writer_thread;
  WriterThread::Owner* writer_owner = nullptr;  // created with the first trace (trace_session.cc)
  // The trace path GS_OUTPUT names (expanded at activation); output_path is the file being (or
  // last) written, which differs for on-demand windows and O_EXCL-numbered names.
  std::string base_path;
  std::string host;
  bool source_created = false;  // the factory ran (the source is built once per process image)
  // On-demand mode (GS_ON_DEMAND=1): the control listener and its capture windows.
  control::ControlListener* listener = nullptr;
};

// The state word (an AgentState), the parts it describes (published before the state), what the
// shim registered, and whether this is a child forked from an active parent (CUPTI must not be
// used there).
extern std::atomic<int> g_state;
extern std::atomic<AgentParts*> g_parts;
extern std::atomic<CaptureSourceFactory> g_factory;
extern std::atomic<ApiNameFunction> g_api_names;
extern std::atomic<bool> g_forked_from_active;
// The calling threads' Python frames (agent/python), in static storage (agent.cc says why).
extern PythonStackReader g_python;

// "dormant", "recording", ... as status replies and messages spell the states.
const char* StateName(int state);

// Disables recording after an internal failure (one message; the application goes on).
void DisableAfterFailure(AgentParts* parts, const std::string& why) GS_EXCLUDES(parts->control_mu);

// Starts a trace at `path` (O_EXCL, numbered if taken): the file and its writer, the capture
// source (built and started on first use; resumed for a later on-demand window), the header, the
// writer thread. `window` > 0 numbers an on-demand window (written into the header). Once at
// activation, and once per on-demand window. False with *why when the trace cannot start; on
// demand, nothing of the failed window stays behind but the source, which the caller pauses.
bool OpenTrace(AgentParts* parts, const std::string& path, int window, std::string* why)
    GS_EXCLUDES(parts->control_mu, parts->writer_mu);

// Ends the trace being written: the capture source's last records (forced flush; then Stop at the
// end of the process image, Pause between on-demand windows), the writer thread, the TraceEnd
// frame. `was_active`: recording was on until now (not disabled after a failure).
void CloseTrace(AgentParts* parts, gpustall::trace::EndReason reason, const char* detail, bool final_trace,
                bool was_active) GS_EXCLUDES(parts->control_mu, parts->writer_mu);

// atexit and pthread_atfork handlers, installed once per process (process_hooks.cc).
void InstallProcessHooks();
// Registers the exit handler again once CUDA has run, so that it runs before CUDA's teardown.
void RegisterExitHandlerAfterRuntime();
// Ends recording of this process image (exit or exec).
void FinishRecording(gpustall::trace::EndReason reason, const char* detail);

// GS_ON_DEMAND=1 or GS_PERIODIC_MS: starts the control listener (which opens the periodic
// windows) and leaves the agent in standby (on_demand.cc).
void EnterStandby(AgentParts* parts);
// Whether `config` asks for periodic windows: a period, and a window shorter than it (a window
// as long as its period is continuous recording, done without windows).
bool PeriodicWindows(const Config& config);

// Preserves errno across the agent's slow paths.
class ErrnoSaver {
 public:
  ErrnoSaver() : saved_(errno) {}
  ~ErrnoSaver() { errno = saved_; }

 private:
  int saved_;
};

}  // namespace core
}  // namespace gs

#endif  // GPUSTALL_AGENT_CORE_AGENT_PARTS_H_
