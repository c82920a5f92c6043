// fork_gate.h — the one lock that fork's prepare handler waits for besides control_mu: held by
// the agent's own threads only around the few short calls that take a process-wide lock which a
// forked child would inherit held (the thread holding it does not exist there) and which glibc's
// fork does not reset.
//
// Why not the writer lock: the writer thread holds writer_mu across a whole drain and flush
// (symbolizing new frames, compressing, write(2) of the chunk), which takes hundreds of
// milliseconds on a slow disk or a large library; a fork waiting for that stalls the job (a
// DataLoader starts its workers by fork). The child never uses the parent's writer (it leaks the
// parent's parts, process_hooks.cc), so a half-built chunk in its copy of memory is harmless. What
// is not harmless is a libc or loader lock held by the vanished writer thread; those calls hold
// this gate instead, for microseconds:
//   - dl_iterate_phdr (ModuleMap: the loader's list lock; a child's dlopen would hang),
//   - dlopen(RTLD_NOLOAD)/dlsym/dlclose of the mapped CUDA driver (agent/capture/cuda_device.cc),
//   - atexit (the late exit-handler registration: libc's exit-handler list lock; exit would hang),
//   - the fault guard's install spin (agent/python/fault_guard.cc).
// malloc's and stdio's locks need no gate: glibc's fork takes and resets them itself.
//
// Lock order: a leaf. Take it after any agent mutex (fork's prepare holds control_mu when it
// takes the gate) and take no other lock while holding it.
#ifndef GPUSTALL_AGENT_CORE_FORK_GATE_H_
#define GPUSTALL_AGENT_CORE_FORK_GATE_H_

#include "agent/core/mutex.h"

namespace gs {

// Constant-initialised (std::mutex's constructor is constexpr) and trivially destroyed, so it is
// usable at any time, exit included. One per process image: inline, so every library of the agent
// that includes this header shares it.
inline Mutex g_fork_gate;

}  // namespace gs

#endif  // GPUSTALL_AGENT_CORE_FORK_GATE_H_
