// agent_thread_test.cc — the agent's threads start with every signal blocked, named and marked as
// the agent's, and leave their creator's signal mask as it was.
#include "agent/core/agent_thread.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <cstring>
#include <string>

namespace gs {
namespace {

struct Seen {
  sigset_t mask;
  char name[16] = {};
  bool agent = false;
};

void* RecordItself(void* arg) {
  auto* seen = static_cast<Seen*>(arg);
  pthread_sigmask(SIG_BLOCK, nullptr, &seen->mask);
  pthread_getname_np(pthread_self(), seen->name, sizeof seen->name);
  seen->agent = IsAgentThread();
  return nullptr;
}

// The signals an application handles or directs at its process; a handler of one of them running
// on an agent thread would see the agent's state, not the application's.
constexpr int kApplicationSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2,
                                       SIGALRM, SIGCHLD, SIGPROF, SIGVTALRM, SIGPIPE, SIGWINCH};

TEST(StartAgentThreadTest, TheThreadBlocksEverySignalAndIsNamedAndMarkedBeforeItsMainRuns) {
  sigset_t none, before;
  sigemptyset(&none);
  ASSERT_EQ(pthread_sigmask(SIG_SETMASK, &none, &before), 0);
  Seen seen;
  pthread_t thread;
  ASSERT_EQ(StartAgentThread("gpustall-test", &RecordItself, &seen, &thread), 0);
  ASSERT_EQ(pthread_join(thread, nullptr), 0);
  for (int signal : kApplicationSignals) {
    EXPECT_EQ(sigismember(&seen.mask, signal), 1) << strsignal(signal);
  }
  for (int signal = SIGRTMIN; signal <= SIGRTMAX; ++signal) {
    EXPECT_EQ(sigismember(&seen.mask, signal), 1) << "real-time signal " << signal;
  }
  EXPECT_EQ(std::string(seen.name), "gpustall-test");
  EXPECT_TRUE(seen.agent);         // from its first instruction
  EXPECT_FALSE(IsAgentThread());  // the creator stays the application's

  // The creating thread's mask is what it was.
  sigset_t after;
  ASSERT_EQ(pthread_sigmask(SIG_SETMASK, &before, &after), 0);
  for (int signal : kApplicationSignals) {
    EXPECT_EQ(sigismember(&after, signal), 0) << strsignal(signal);
  }
}

TEST(StartAgentThreadTest, TheCreatorKeepsTheSignalsItBlockedItself) {
  sigset_t some, before, after;
  sigemptyset(&some);
  sigaddset(&some, SIGUSR2);
  ASSERT_EQ(pthread_sigmask(SIG_SETMASK, &some, &before), 0);
  Seen seen;
  pthread_t thread;
  ASSERT_EQ(StartAgentThread("gpustall-test2", &RecordItself, &seen, &thread), 0);
  ASSERT_EQ(pthread_join(thread, nullptr), 0);
  ASSERT_EQ(pthread_sigmask(SIG_SETMASK, &before, &after), 0);
  EXPECT_EQ(sigismember(&after, SIGUSR2), 1);
  EXPECT_EQ(sigismember(&after, SIGINT), 0);
  EXPECT_EQ(sigismember(&seen.mask, SIGINT), 1);
}

}  // namespace
}  // namespace gs
