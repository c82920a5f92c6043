// process_hooks.cc — the end of recording at exit and exec, and fork (declared in agent_parts.h).
//
// Exit: an atexit handler, registered at activation and once more after the first drained
// records, so that it runs before the CUDA runtime's own teardown. Exec: the shim calls
// AgentBeforeExec (agent.cc) right before the real exec. Fork: the child is reset to dormant and
// the parent's parts are leaked (its threads did not survive); CUPTI is never used in the child.
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>

#include "agent/core/agent_parts.h"
#include "agent/core/fork_gate.h"

namespace gs {
namespace core {
namespace {

namespace pb = gpustall::trace;

std::atomic<bool> g_process_hooks_installed{false};
std::atomic<bool> g_late_atexit_registered{false};

void AtExit() {
  ErrnoSaver saver;
  FinishRecording(pb::END_REASON_EXIT, "");
}

// Fork's prepare takes the capture-source lock and the fork gate, so that the child inherits
// neither a CaptureSource call in progress nor a libc or loader lock that an agent thread held
// (fork_gate.h). Not writer_mu: the writer thread holds it across a whole drain and flush
// (symbolizing, compressing, writing the chunk), which can take hundreds of milliseconds, and
// the child never touches the parent's writer (it leaks the parent's parts, below), so a
// half-built chunk in its memory is harmless. The fork then waits only for short sections.
void ForkPrepare() GS_NO_THREAD_SAFETY_ANALYSIS {
  AgentParts* parts = g_parts.load(std::memory_order_acquire);
  if (parts != nullptr) parts->control_mu.Lock();
  g_fork_gate.Lock();
}

void ForkParent() GS_NO_THREAD_SAFETY_ANALYSIS {
  g_fork_gate.Unlock();
  AgentParts* parts = g_parts.load(std::memory_order_acquire);
  if (parts != nullptr) parts->control_mu.Unlock();
}

void ForkChild() GS_NO_THREAD_SAFETY_ANALYSIS {
  // Only this thread survives; the writer thread and CUPTI's threads are gone. Reset to dormant
  // and leak the parent's parts: the child writes its own file if it ever records. writer_mu may
  // be held by the vanished writer thread: it is part of what is leaked, never taken here.
  g_fork_gate.Unlock();
  AgentParts* parts = g_parts.load(std::memory_order_acquire);
  if (parts != nullptr) {
    parts->control_mu.Unlock();
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

}  // namespace

void FinishRecording(pb::EndReason reason, const char* detail) {
  AgentParts* parts = g_parts.load(std::memory_order_acquire);
  if (parts == nullptr || parts->pid != getpid()) return;
  if (parts->listener != nullptr) parts->listener->RemoveSocket();
  try {
    MutexLock window_lock(&parts->window_mu);
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

void RegisterExitHandlerAfterRuntime() {
  if (!g_late_atexit_registered.exchange(true)) {
    // Activation usually happens just BEFORE the first real CUDA call, so the runtime's own
    // atexit teardown gets registered after ours and would run first. Records drained by the
    // writer mean a CUDA call has completed (the runtime is initialised): registering again now
    // makes our handler run before the runtime's teardown. AtExit is idempotent. This runs on
    // the writer thread: atexit takes libc's exit-handler lock, so not across a fork.
    MutexLock gate(&g_fork_gate);
    atexit(&AtExit);
  }
}

// atexit now, i.e. after CUDA started (handlers run in reverse order: ours runs before CUDA's
// own teardown). Once per process: a forked child inherits both registrations.
void InstallProcessHooks() {
  if (!g_process_hooks_installed.exchange(true)) {
    atexit(&AtExit);
    pthread_atfork(&ForkPrepare, &ForkParent, &ForkChild);
  }
}

}  // namespace core
}  // namespace gs
