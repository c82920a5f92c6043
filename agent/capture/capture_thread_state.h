// capture_thread_state.h — what the capture side knows about the calling thread.
//
// Shared by the shim's wrappers and the CUPTI callback, which run on the same application thread
// (the CUPTI API_ENTER callback fires inside the real runtime function the wrapper called):
//   * the wrapper marks "inside an interposed call" so that its own nested CUDA calls fall straight
//     through, and so that the CUPTI callback leaves the recording to the wrapper and only hands it
//     the correlation id;
//   * the current device, kept by the cudaSetDevice wrapper (a runtime's current device is per
//     thread), so records carry it without a cudaGetDevice call per record.
//
// Why a plain struct in a thread_local: a wrapper's fast path must cost a TLS load, nothing more;
// it needs no constructor or destructor (zero-initialised TLS), so it is safe in threads that exit,
// in forked children and during teardown.
#ifndef GPUSTALL_AGENT_CAPTURE_CAPTURE_THREAD_STATE_H_
#define GPUSTALL_AGENT_CAPTURE_CAPTURE_THREAD_STATE_H_

#include <cstdint>

namespace gs {

struct CaptureThreadState {
  // > 0 while the thread is inside an interposed call (or inside the agent's own CUDA calls).
  int interposer_depth;
  // Set by the CUPTI API_ENTER callback while interposer_depth > 0 (first one wins: the outermost
  // runtime call of the wrapper); taken and cleared by the wrapper.
  uint32_t pending_correlation_id;
  // Current device ordinal, as last set by cudaSetDevice on this thread (0 by default).
  int32_t device;
  // Event-pair fallback: the start event slot claimed by BeforeGpuWork, -1 when none. Stored as
  // slot + 1 so that zero-initialised TLS means "none".
  int32_t pending_pair_slot_plus_one;
  // CUPTI's correlation id of the runtime call this thread is inside, for calls the shim did not
  // see (Python's ctypes, a statically linked runtime): set at CUPTI's API_ENTER, cleared at its
  // API_EXIT; 0 outside. The blocking-call wrappers leave waits inside a CUDA call to the API call
  // record. An id, not a depth: an EXIT missed when a session stops mid-call is repaired by the
  // thread's next call.
  uint32_t cupti_call_correlation;
  // The same for a driver call the agent records from CUPTI's DRIVER_API callback (one made outside
  // every runtime call: Triton's launcher, a library through cuGetProcAddress): its correlation
  // id from API_ENTER to API_EXIT, 0 outside; driver calls inside it are its own.
  uint32_t cupti_driver_correlation;
  // Interposition mode's own correlation ids (shim/interposed_call.cc): the next one this thread
  // hands out and the end of its block; equal (both 0 at first) when a new block is due.
  uint32_t next_agent_correlation;
  uint32_t agent_correlation_end;
};

// True while the thread is inside a CUDA call, a wrapper, or the agent's own CUDA work.
inline bool InsideCudaCall(const CaptureThreadState& state) {
  return state.interposer_depth != 0 || state.cupti_call_correlation != 0 ||
         state.cupti_driver_correlation != 0;
}

// The calling thread's state (zero-initialised). Initial-exec TLS, read inline: a wrapper's fast
// path is one %fs-relative load, not a call into the agent and __tls_get_addr (the
// general-dynamic model a shared library gets by default). It needs 28 bytes of the static TLS
// surplus that glibc reserves for libraries loaded later, as the ring recorder's slot does
// (agent/record/ring_recorder.cc), so it holds also when the CUDA driver dlopens the agent.
extern __attribute__((tls_model("initial-exec"))) thread_local CaptureThreadState t_capture_thread_state;
inline CaptureThreadState& ThisThreadCaptureState() { return t_capture_thread_state; }

// RAII: marks the thread as inside the agent's own CUDA/CUPTI work, so that the shim passes those
// calls straight through and the CUPTI callback ignores them.
class ScopedAgentCudaCall {
 public:
  ScopedAgentCudaCall() : state_(ThisThreadCaptureState()) { ++state_.interposer_depth; }
  ~ScopedAgentCudaCall() { --state_.interposer_depth; }
  ScopedAgentCudaCall(const ScopedAgentCudaCall&) = delete;
  ScopedAgentCudaCall& operator=(const ScopedAgentCudaCall&) = delete;

 private:
  CaptureThreadState& state_;
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_CAPTURE_CAPTURE_THREAD_STATE_H_
