// agent_thread.h — which threads are the agent's own (writer, sampler, control socket, event-pair
// poller).
//
// Each is marked once when it starts (StartAgentThread). The shim's blocking-call wrappers pass
// such a thread's calls straight through: libgsagent.so is linked -Bsymbolic, so the agent's own
// read(), poll() and condition-variable waits bind to those very wrappers, and the writer's 10 ms
// wait must not become a host wait of the traced process.
//
// Thread safety: each thread reads and writes only its own flag; async-signal-safe.
#ifndef GPUSTALL_AGENT_CORE_AGENT_THREAD_H_
#define GPUSTALL_AGENT_CORE_AGENT_THREAD_H_

#include <pthread.h>

namespace gs {

namespace agent_thread_internal {
// Initial-exec, trivially destructible: one TLS load, no allocation even when the library was
// dlopen'ed (the CUDA driver's injection).
extern __attribute__((tls_model("initial-exec"))) thread_local bool t_is_agent_thread;
}  // namespace agent_thread_internal

// Marks the calling thread as one of the agent's for the rest of its life.
inline void MarkAgentThread() { agent_thread_internal::t_is_agent_thread = true; }
inline bool IsAgentThread() { return agent_thread_internal::t_is_agent_thread; }

// Starts one of the agent's threads: every signal blocked in it (they belong to the application's
// threads, whose handlers must never run on ours; the sampler's own signal must reach only the
// threads it samples), named `name` (at most 15 characters, "gpustall-...") so that top, py-spy
// and whoever measures the agent tell it apart (before `main` runs and when this returns), and
// marked (MarkAgentThread) before `main` runs.
// Returns pthread_create's error (ENOMEM when its start record cannot be allocated), 0 on
// success.
int StartAgentThread(const char* name, void* (*main)(void*), void* arg, pthread_t* thread);

}  // namespace gs

#endif  // GPUSTALL_AGENT_CORE_AGENT_THREAD_H_
