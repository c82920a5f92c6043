// agent_thread.cc
#include "agent/core/agent_thread.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

#include <new>

namespace gs {
namespace agent_thread_internal {
__attribute__((tls_model("initial-exec"))) thread_local bool t_is_agent_thread = false;
}  // namespace agent_thread_internal

namespace {

// What the new thread needs before its main runs; freed by the thread.
struct AgentThreadStart {
  char name[16];
  void* (*main)(void*);
  void* arg;
};

void* RunAgentThread(void* start_arg) {
  auto* start = static_cast<AgentThreadStart*>(start_arg);
  AgentThreadStart copy = *start;
  delete start;
  // Named and marked by itself, before its main: nothing it does is ever seen as unnamed or as
  // the application's.
  pthread_setname_np(pthread_self(), copy.name);
  MarkAgentThread();
  return copy.main(copy.arg);
}

}  // namespace

int StartAgentThread(const char* name, void* (*main)(void*), void* arg, pthread_t* thread) {
  // No exception out of the agent's start-up: a failed allocation is a failed start.
  auto* start = new (std::nothrow) AgentThreadStart{{}, main, arg};
  if (start == nullptr) return ENOMEM;
  strncpy(start->name, name, sizeof start->name - 1);
  // A new thread inherits its creator's mask: block everything around the create, then restore.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const int rc = pthread_create(thread, nullptr, &RunAgentThread, start);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (rc != 0) {
    delete start;
    return rc;
  }
  // Named when this returns, too, whichever runs first (the thread names itself before its main).
  pthread_setname_np(*thread, name);
  return 0;
}

}  // namespace gs
