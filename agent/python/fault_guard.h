// fault_guard.h — turn a SIGSEGV/SIGBUS raised by the agent's own speculative reads into a
// failed read instead of a crash, without changing what happens to the application's faults.
//
// Usage (sigsetjmp must be called in the function that does the reads, and only in the
// forms the C standard allows, so the caller writes it out):
//
//   FaultScope scope;
//   FaultScopeBegin(&scope);
//   if (sigsetjmp(scope.env, 0) == 0) {
//     FaultScopeArm(&scope);
//     ... plain loads that may fault; no calls into code that is not ours, no locks, no malloc,
//     no objects with destructors (a fault skips them) ...
//     FaultScopeEnd(&scope);
//   } else {
//     ... a read faulted (the handler already ended the scope); locals written inside the
//     scope are only reliable if volatile ...
//   }
//
// Scopes nest (a sampler's signal handler may capture while the thread it interrupted is
// inside a capture of its own): each scope restores the one it interrupted.
// Cost: sigsetjmp without saving the signal mask (~10 ns) and three thread-local accesses.
//
// Handler policy: installed once (InstallFaultGuard, off the hot path) for SIGSEGV and SIGBUS
// with SA_SIGINFO|SA_ONSTACK|SA_NODEFER. On a fault it looks at a thread-local pointer: if this
// thread is inside a FaultScope, it jumps back to it; otherwise it hands the signal to whatever
// handler was installed before (calling it with the same arguments, or restoring SIG_DFL and
// returning so that the faulting instruction re-faults with the default action). If another
// component installs its own handler later, ours is simply no longer called: guarded reads then
// lose their protection but the application's handler is untouched. FaultGuardStillInstalled()
// lets a background thread notice that and re-install on top (chaining to the newcomer).
//
// Thread safety: all functions may be called from any thread. Install is idempotent.
#ifndef GPUSTALL_AGENT_PYTHON_FAULT_GUARD_H_
#define GPUSTALL_AGENT_PYTHON_FAULT_GUARD_H_

#include <setjmp.h>

#include <cstdint>

namespace gs {

struct FaultScope {
  sigjmp_buf env;
  FaultScope* interrupted;  // the scope this one nests in, restored when it ends
};

// The scope the current thread is reading under, or nullptr. initial-exec TLS: reading it in the
// signal handler must not allocate (a dynamic TLS access could, on a thread's first touch).
extern thread_local FaultScope* tl_fault_scope __attribute__((tls_model("initial-exec")));

inline void FaultScopeBegin(FaultScope* scope) { scope->interrupted = tl_fault_scope; }
inline void FaultScopeArm(FaultScope* scope) { tl_fault_scope = scope; }
inline void FaultScopeEnd(FaultScope* scope) { tl_fault_scope = scope->interrupted; }

// Installs the handler (once per process). Returns false if sigaction failed.
bool InstallFaultGuard();

// True if our handler is still the one the kernel calls for SIGSEGV and SIGBUS. One sigaction
// query per signal: not for the hot path.
bool FaultGuardStillInstalled();

// Re-installs on top of a handler that displaced ours; that newer handler becomes the one we
// chain to. No-op if still installed.
bool ReinstallFaultGuardIfDisplaced();

// Faults absorbed so far (process-wide, relaxed).
uint64_t FaultGuardCaughtCount();

}  // namespace gs

#endif  // GPUSTALL_AGENT_PYTHON_FAULT_GUARD_H_
