// fault_guard.cc — see fault_guard.h for the policy.
#include "agent/python/fault_guard.h"

#include <signal.h>
#include <string.h>

#include <atomic>

#include "agent/core/fork_gate.h"

namespace gs {

thread_local FaultScope* tl_fault_scope __attribute__((tls_model("initial-exec"))) = nullptr;

namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS};

// Previous handlers, indexed by position in kSignals. Written only while installing (under
// g_install_lock's spin), read by the handler; a struct copy racing with an install could only
// happen if an application fault coincided with a re-install, which chains either way.
struct sigaction g_previous[2];
std::atomic<bool> g_installed{false};
std::atomic_flag g_install_lock = ATOMIC_FLAG_INIT;
std::atomic<uint64_t> g_caught{0};

int SignalIndex(int sig) { return sig == SIGSEGV ? 0 : 1; }

void ChainToPrevious(int sig, siginfo_t* info, void* context) {
  const struct sigaction& prev = g_previous[SignalIndex(sig)];
  if (prev.sa_flags & SA_SIGINFO) {
    if (prev.sa_sigaction != nullptr) prev.sa_sigaction(sig, info, context);
    return;
  }
  if (prev.sa_handler == SIG_DFL || prev.sa_handler == SIG_IGN) {
    // Put the default back and let the fault happen again with it: the process dies exactly as
    // it would have without us. A signal sent by kill()/raise() does not re-occur: re-raise it.
    sigaction(sig, &prev, nullptr);
    if (info == nullptr || info->si_code <= 0) raise(sig);
    return;
  }
  prev.sa_handler(sig);
}

void OnFault(int sig, siginfo_t* info, void* context) {
  FaultScope* scope = tl_fault_scope;
  if (scope != nullptr) {
    tl_fault_scope = scope->interrupted;
    g_caught.fetch_add(1, std::memory_order_relaxed);  // lock-free: async-signal-safe
    siglongjmp(scope->env, 1);  // SA_NODEFER: the signal is not blocked, no mask to restore
  }
  ChainToPrevious(sig, info, context);
}

bool IsOurs(const struct sigaction& sa) {
  return (sa.sa_flags & SA_SIGINFO) && sa.sa_sigaction == &OnFault;
}

bool InstallLocked() {
  struct sigaction ours;
  memset(&ours, 0, sizeof ours);
  ours.sa_sigaction = &OnFault;
  ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESTART;
  sigemptyset(&ours.sa_mask);
  bool ok = true;
  for (int i = 0; i < 2; ++i) {
    struct sigaction current;
    if (sigaction(kSignals[i], nullptr, &current) != 0) {
      ok = false;
      continue;
    }
    if (IsOurs(current)) continue;
    g_previous[i] = current;
    if (sigaction(kSignals[i], &ours, nullptr) != 0) ok = false;
  }
  return ok;
}

// Holds the fork gate around the spin: a fork while the writer thread reinstalls the guard would
// leave the child's spin set for good (agent/core/fork_gate.h).
class SpinGuard {
 public:
  SpinGuard() GS_NO_THREAD_SAFETY_ANALYSIS {
    g_fork_gate.Lock();
    while (g_install_lock.test_and_set(std::memory_order_acquire)) {
    }
  }
  ~SpinGuard() GS_NO_THREAD_SAFETY_ANALYSIS {
    g_install_lock.clear(std::memory_order_release);
    g_fork_gate.Unlock();
  }
};

}  // namespace

bool InstallFaultGuard() {
  if (g_installed.load(std::memory_order_acquire)) return true;
  SpinGuard lock;
  if (g_installed.load(std::memory_order_relaxed)) return true;
  const bool ok = InstallLocked();
  if (ok) g_installed.store(true, std::memory_order_release);
  return ok;
}

bool FaultGuardStillInstalled() {
  for (int sig : kSignals) {
    struct sigaction current;
    if (sigaction(sig, nullptr, &current) != 0 || !IsOurs(current)) return false;
  }
  return true;
}

bool ReinstallFaultGuardIfDisplaced() {
  if (!g_installed.load(std::memory_order_acquire)) return InstallFaultGuard();
  SpinGuard lock;
  return InstallLocked();
}

uint64_t FaultGuardCaughtCount() { return g_caught.load(std::memory_order_relaxed); }

}  // namespace gs
