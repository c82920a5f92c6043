// agent.h — the agent's lifecycle, as the composition root in shim/ sees it.
//
// One process-wide Agent (agent/core/) owns the Config, the per-thread rings, the stack capturer,
// the writer thread and the CaptureSource. The shim never sees those parts: it asks for the
// Recorder, and it forwards the injection entry points and exec to the functions below.
//
// Lifecycle (states are process-wide, one atomic word):
//   dormant  ──first AgentRecorder()/AgentInitializeInjection()──▶ active  (or disabled)
//   active   ──atexit / I/O error / bad GS_* value──▶ finished / disabled  (never active again)
//   GS_ON_DEMAND=1: first CUDA call ──▶ standby (listening on a control socket, recording
//              nothing) ◀──gsctl start/stop──▶ active (one complete trace file per window)
//   any      ──fork (child side)──▶ dormant again, state leaked; the child activates on ITS first
//              CUDA call and writes its own file (its pid in the name). A child forked from an
//              active parent never starts a CaptureSource (CUPTI can hang in such a child): it
//              records what the interposers see and says so in the trace's capture mode.
// Activation is lazy: the library constructor does nothing heavy, so a process that never
// touches CUDA gets no file, no thread and no allocation. It happens at most once per process
// image even when LD_PRELOAD wrappers and InitializeInjection race on different threads.
//
// Thread safety: every function here may be called from any thread at any time, including from
// inside a CUDA call made by the agent itself (re-entry returns quickly and records nothing).
// None of them throws, exits, or changes errno.
#ifndef GPUSTALL_AGENT_CORE_AGENT_H_
#define GPUSTALL_AGENT_CORE_AGENT_H_

#include "agent/writer/api_name.h"
#include "agent/capture/capture_source.h"
#include "agent/core/config/config.h"
#include "agent/record/recorder.h"

namespace gs {

// Builds the process's CaptureSource (CUPTI, or the event-pair fallback) at activation.
// Called at most once per activation, on the activating thread, with the validated Config
// (GS_CUPTI, GS_CUPTI_LIBRARY, ...). The returned object is owned by the Agent and is never
// deleted (it may still be referenced by a CUPTI thread at exit); return nullptr for "no source".
using CaptureSourceFactory = CaptureSource* (*)(const Config& config);

// Registers the factory. Call it from the shim's library constructor (before any CUDA call can
// reach AgentRecorder); later calls replace the factory for future activations only.
// Without a factory the agent records what the interposers hand it and nothing else.
void AgentSetCaptureSourceFactory(CaptureSourceFactory factory);

// Registers how the writer names API ids (the shim's table; CUPTI callback names for
// ApiSource::kCuptiCallback). Same timing rules as the factory. Without it, names are "api_<id>".
void AgentSetApiNameFunction(ApiNameFunction names);

// The recorder to hand an intercepted call to, or nullptr when the agent is dormant-and-failed,
// disabled, finished, on demand between capture windows (kStandby), or when the calling thread is
// already inside the agent (re-entry).
// The first call in a process activates the agent (reads GS_*, opens the file, starts the writer
// thread and the CaptureSource); after that it costs one atomic load. While another thread is
// activating, callers wait (bounded) so that no call is lost; the activating thread itself, if a
// CUDA call re-enters during activation, gets nullptr.
// The returned pointer stays valid for the life of the process (static storage, never freed).
Recorder* AgentRecorder();

// The recorder while the agent is recording (kActive), else nullptr. Never activates the agent:
// for the blocking-call wrappers, which a process that never touches CUDA also calls (activation
// waits for the first CUDA call). One atomic load.
Recorder* AgentRecorderIfActive();

// For the exported `InitializeInjection` entry point (CUDA_INJECTION64_PATH). Activates the
// agent if it is not active yet. Returns 1 (success for the driver) in every case: a profiler
// that cannot start must not stop the application's CUDA initialisation.
int AgentInitializeInjection();

// For the shim's execve/execv* interposers (not posix_spawn: that does not replace this
// process), right before the real exec: stops the CaptureSource after a forced flush, writes
// everything recorded so far and ends the trace (TraceEnd reason EXEC), exactly like exit. The
// new image starts clean (dormant). If the exec then FAILS, this process records no more (its
// trace is already closed; a second trace file in one process image would be confusing).
// No-op when the agent is not active.
void AgentBeforeExec();

// Test and diagnostic support (also what `AgentRecorder() == nullptr` means, spelled out).
enum class AgentState : int {
  kDormant = 0,     // nothing done yet (or reset in a forked child)
  kActivating = 1,  // one thread is activating
  kActive = 2,      // recording
  kDisabled = 3,    // GS_ENABLE=0/GS_DISABLE=1, bad GS_* value, or an internal/I-O failure
  kFinished = 4,    // final flush at exit done
  kStandby = 5,     // GS_ON_DEMAND=1: activated and listening for gsctl, not recording; a capture
                    // window switches to kActive and back (agent/control/capture_windows.h, core/on_demand.cc)
};
AgentState AgentCurrentState();

}  // namespace gs

#endif  // GPUSTALL_AGENT_CORE_AGENT_H_
