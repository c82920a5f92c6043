// The read guard absorbs our faults and leaves the application's fault handling alone.
#include "agent/python/fault_guard.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "agent/python/tests/skip_under_tsan.h"

namespace gs {
namespace {

volatile uintptr_t g_sink;

// An address that faults when read: one PROT_NONE page.
uintptr_t UnreadablePage() {
  void* p = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT_NE(p, MAP_FAILED);
  return reinterpret_cast<uintptr_t>(p);
}

// Returns true if the read faulted and came back through the scope.
bool GuardedRead(uintptr_t address) {
  FaultScope scope;
  volatile bool faulted = true;
  FaultScopeBegin(&scope);
  if (sigsetjmp(scope.env, 0) == 0) {
    FaultScopeArm(&scope);
    g_sink = *reinterpret_cast<volatile uintptr_t*>(address);
    faulted = false;
    FaultScopeEnd(&scope);
  }
  return faulted;
}

// A guarded read that faults while an outer scope is armed: the outer scope must still be
// armed afterwards (a sampler's signal handler capturing inside a hook's capture).
bool NestedFaultLeavesOuterScopeArmed(uintptr_t bad) {
  FaultScope outer;
  volatile int stage = 0;
  FaultScopeBegin(&outer);
  if (sigsetjmp(outer.env, 0) == 0) {
    FaultScopeArm(&outer);
    stage = 1;
    if (!GuardedRead(bad)) return false;  // inner fault caught by the inner scope
    stage = 2;
    g_sink = *reinterpret_cast<volatile uintptr_t*>(bad);  // must land in `outer`
    stage = 3;
    FaultScopeEnd(&outer);
  }
  return stage == 2 && tl_fault_scope == nullptr;
}

TEST(FaultGuardTest, FaultInsideScopeReturnsToTheScope) {
  GS_SKIP_UNDER_TSAN();
  ASSERT_TRUE(InstallFaultGuard());
  const uintptr_t bad = UnreadablePage();
  const uint64_t before = FaultGuardCaughtCount();
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(GuardedRead(bad));
  EXPECT_EQ(FaultGuardCaughtCount() - before, 1000u);
  uintptr_t fine = 42;
  EXPECT_FALSE(GuardedRead(reinterpret_cast<uintptr_t>(&fine)));
  EXPECT_TRUE(FaultGuardStillInstalled());
  EXPECT_EQ(tl_fault_scope, nullptr);
}

TEST(FaultGuardTest, NestedScopesRestoreTheInterruptedOne) {
  GS_SKIP_UNDER_TSAN();
  ASSERT_TRUE(InstallFaultGuard());
  EXPECT_TRUE(NestedFaultLeavesOuterScopeArmed(UnreadablePage()));
}

void AppHandler(int, siginfo_t* info, void*) {
  // The application's own handler sees its own fault address.
  _exit(info->si_addr != nullptr ? 42 : 43);
}

TEST(FaultGuardDeathTest, ApplicationHandlerInstalledBeforeStillGetsItsFaults) {
  GS_SKIP_UNDER_TSAN();
  EXPECT_EXIT(
      {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = &AppHandler;
        sa.sa_flags = SA_SIGINFO;
        sigaction(SIGSEGV, &sa, nullptr);
        ReinstallFaultGuardIfDisplaced();  // ours on top, chaining to the app's
        if (!FaultGuardStillInstalled()) _exit(1);
        const uintptr_t bad = UnreadablePage();
        if (!GuardedRead(bad)) _exit(2);                       // ours still works
        g_sink = *reinterpret_cast<volatile uintptr_t*>(bad);  // the app's fault
        _exit(3);
      },
      ::testing::ExitedWithCode(42), "");
}

TEST(FaultGuardDeathTest, UnhandledFaultStillKillsWithSigsegv) {
  GS_SKIP_UNDER_TSAN();
  EXPECT_EXIT(
      {
        signal(SIGSEGV, SIG_DFL);
        ReinstallFaultGuardIfDisplaced();
        g_sink = *reinterpret_cast<volatile uintptr_t*>(UnreadablePage());
        _exit(3);
      },
      ::testing::KilledBySignal(SIGSEGV), "");
}

TEST(FaultGuardDeathTest, RaisedSigsegvStillKills) {
  GS_SKIP_UNDER_TSAN();
  EXPECT_EXIT(
      {
        signal(SIGSEGV, SIG_DFL);
        ReinstallFaultGuardIfDisplaced();
        raise(SIGSEGV);
        _exit(3);
      },
      ::testing::KilledBySignal(SIGSEGV), "");
}

TEST(FaultGuardDeathTest, DisplacedGuardIsNoticedAndReinstalledOnTop) {
  GS_SKIP_UNDER_TSAN();
  EXPECT_EXIT(
      {
        ReinstallFaultGuardIfDisplaced();
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = &AppHandler;
        sa.sa_flags = SA_SIGINFO;
        sigaction(SIGSEGV, &sa, nullptr);  // e.g. faulthandler.enable() after the agent
        if (FaultGuardStillInstalled()) _exit(1);
        ReinstallFaultGuardIfDisplaced();
        if (!FaultGuardStillInstalled()) _exit(2);
        const uintptr_t bad = UnreadablePage();
        if (!GuardedRead(bad)) _exit(4);
        g_sink = *reinterpret_cast<volatile uintptr_t*>(bad);  // chained to the newcomer
        _exit(3);
      },
      ::testing::ExitedWithCode(42), "");
}

}  // namespace
}  // namespace gs
