// host_wait_call.h — what every blocking-call wrapper (host_wait_interposers.cc, one per row of
// agent/capture/host_wait/host_wait.def) does around the real libc function.
//
// A wrapper is:
//     real = RealWaitFunction(f)                       one atomic load (resolved at load time)
//     if (!HostWaitWanted()) return real(args...);     off, the agent's thread, no ring, inside CUDA
//     t0 = MonotonicNs(); result = real(args...); t1 = MonotonicNs();
//     if (t1 - t0 >= HostWaitMinNs()) RecordHostWait(f, state, t0, t1, site);   out of line
//     return result;
// The fast path is three relaxed loads and three TLS loads (one behind a call); a call that blocked less than the
// threshold adds two vDSO clock reads (no system call, no lock, no allocation). errno and the
// result are exactly what the real function left: nothing before the call writes errno, the clock
// does not, and RecordHostWait restores it.
//
// Whether the agent is recording is asked only after a long call (RecordHostWait): the agent is
// never activated by a wait (a process that never touches CUDA must not notice us), and between
// on-demand windows the record is simply not made.
//
// Thread safety: the settings are written once per activation, before recording starts, and read
// relaxed; everything else is per thread.
#ifndef GPUSTALL_SHIM_HOST_WAIT_CALL_H_
#define GPUSTALL_SHIM_HOST_WAIT_CALL_H_

#include <atomic>
#include <cstdint>

#include "agent/capture/capture_thread_state.h"
#include "agent/capture/host_wait/host_wait.h"
#include "agent/core/agent_thread.h"
#include "agent/record/recorder.h"
#include "agent/record/ring_recorder.h"

namespace gs {
namespace shim {

// GS_HOST_WAITS, GS_WAIT_MIN_US and GS_SAMPLE_ALL_THREADS, set at activation (injection.cc).
// Off until then: before the first CUDA call nothing is recorded anyway.
struct HostWaitSettings {
  std::atomic<bool> on{false};
  std::atomic<uint64_t> min_ns{1000000};
  std::atomic<bool> any_thread{false};
};
extern HostWaitSettings g_host_wait_settings;

// The real libc function of row `f`: resolved by the library constructor (dlvsym for the rows
// with a version, dlsym(RTLD_NEXT) otherwise), lazily if a wrapper runs before it (another
// library's constructor). nullptr when no later object defines it, or when a wrapper runs while
// this thread is resolving (dlsym allocating through a malloc that reads a file): the wrapper then
// returns the row's MISSING failure.
void* ResolveRealWaitFunction(HostWaitFunction f);
extern std::atomic<void*> g_real_wait_functions[kHostWaitFunctionCount];
inline void* RealWaitFunction(HostWaitFunction f) {
  void* p = g_real_wait_functions[static_cast<size_t>(f)].load(std::memory_order_acquire);
  return p != nullptr ? p : ResolveRealWaitFunction(f);
}

// Whether this call is to be timed at all: host waits on, not one of the agent's threads, not
// inside a CUDA call or the agent (interposer_depth: the runtime's own waits inside cudaMemcpy
// belong to the API call, CaptureThreadState::cupti_call_correlation the same for calls only
// CUPTI saw).
// A thread that holds no ring records no waits unless every thread is traced
// (GS_SAMPLE_ALL_THREADS=1: RecordHostWait would claim none), so it skips the two clock reads too:
// a process's other threads (loader pools, the runtime's own) pay a few loads per call, not ~40 ns.
inline bool HostWaitWanted() {
  if (!g_host_wait_settings.on.load(std::memory_order_relaxed)) return false;
  if (IsAgentThread()) return false;
  if (!g_host_wait_settings.any_thread.load(std::memory_order_relaxed) && !RingRecorder::CallingThreadHasRing())
    return false;
  return !InsideCudaCall(ThisThreadCaptureState());
}

inline uint64_t HostWaitMinNs() { return g_host_wait_settings.min_ns.load(std::memory_order_relaxed); }

// Records one long call if the agent is recording (the ring recorder's path: reentrancy flag,
// ring, stack with call-site reuse, Python frames). errno is restored. `site` is the wrapper's
// GS_CALL_SITE().
void RecordHostWait(HostWaitFunction f, HostWaitState state, uint64_t enter_ns, uint64_t exit_ns,
                    const CallSite& site) __attribute__((noinline));

}  // namespace shim
}  // namespace gs

#endif  // GPUSTALL_SHIM_HOST_WAIT_CALL_H_
