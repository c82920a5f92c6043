// agent_thread.h — which threads are the agent's own (writer, sampler, control socket, event-pair
// poller).
//
// Each marks itself once when it starts. The shim's blocking-call wrappers pass such a thread's
// calls straight through: libgsagent.so is linked -Bsymbolic, so the agent's own read(), poll()
// and condition-variable waits bind to those very wrappers, and the writer's 10 ms wait must not
// become a host wait of the traced process.
//
// Thread safety: each thread reads and writes only its own flag; async-signal-safe.
#ifndef GPUSTALL_AGENT_CORE_AGENT_THREAD_H_
#define GPUSTALL_AGENT_CORE_AGENT_THREAD_H_

namespace gs {

namespace agent_thread_internal {
// Initial-exec, trivially destructible: one TLS load, no allocation even when the library was
// dlopen'ed (the CUDA driver's injection).
extern __attribute__((tls_model("initial-exec"))) thread_local bool t_is_agent_thread;
}  // namespace agent_thread_internal

// Marks the calling thread as one of the agent's for the rest of its life.
inline void MarkAgentThread() { agent_thread_internal::t_is_agent_thread = true; }
inline bool IsAgentThread() { return agent_thread_internal::t_is_agent_thread; }

}  // namespace gs

#endif  // GPUSTALL_AGENT_CORE_AGENT_THREAD_H_
