// interposed_call.h — what every generated wrapper does around the real runtime function.
//
// A wrapper (interposers.cc) is:
//     real = RealFunction(api, caller)         the caller's runtime's function (caller_runtime.h):
//                                              a table lookup and an atomic load after the first call
//     if (!call.Begin(api, stream)) return real(args...);   reentrant / agent off: straight through
//     result = real(args...);
//     call.End(result, facts, &params);        out of line: record, effects, event pair
// Begin is the inline fast path (a TLS load, an atomic load); End is the out-of-line slow path.
//
// Reentrancy: Begin marks the thread as inside a wrapper (CaptureThreadState::interposer_depth),
// so CUDA calls the runtime or the agent make while we are inside fall straight through, and the
// CUPTI callback leaves the recording of this call to us.
//
// Thread safety: an InterposedCall lives on the calling thread's stack for one call.
#ifndef GPUSTALL_SHIM_INTERPOSED_CALL_H_
#define GPUSTALL_SHIM_INTERPOSED_CALL_H_

#include <atomic>
#include <cstdint>

#include "agent/capture/caller_runtime.h"
#include "agent/core/agent.h"
#include "agent/core/clock.h"
#include "agent/capture/capture_thread_state.h"
#include "agent/capture/cuda_api/cuda_api.h"
#include "agent/record/recorder.h"

namespace gs {
namespace shim {

// The real function of `api` in the runtime of the call's caller (its return address: the
// runtime it was linked to, caller_runtime.h), nullptr when that runtime lacks it. Lazily resolved,
// cached in an atomic per runtime and function; concurrent first calls resolve the same pointer
// twice, harmlessly.
void* ResolveRealFunction(int runtime, CudaApi api);
extern std::atomic<void*> g_real_functions[kMaxCudaRuntimes][kCudaApiCount];
inline void* RealFunction(CudaApi api, uintptr_t caller) {
  const int runtime = RuntimeOfCaller(caller);
  void* f = g_real_functions[runtime][static_cast<size_t>(api)].load(std::memory_order_acquire);
  return f != nullptr ? f : ResolveRealFunction(runtime, api);
}

// The capture source built by the agent's factory (MakeSourceForShim in injection.cc), or nullptr.
extern std::atomic<CaptureSource*> g_capture_source;
// GS_STACKS != none.
extern std::atomic<bool> g_capture_stacks;

// The calling wrapper's call site: where the application called it, and its stack pointer then.
#define GS_CALL_SITE()                                                          \
  ::gs::CallSite{reinterpret_cast<uintptr_t>(__builtin_return_address(0)),     \
                 reinterpret_cast<uintptr_t>(__builtin_dwarf_cfa())}

class InterposedCall {
 public:
  InterposedCall() = default;
  InterposedCall(const InterposedCall&) = delete;
  InterposedCall& operator=(const InterposedCall&) = delete;

  // Returns false when the call must go straight to the runtime unrecorded: the thread is already
  // inside a wrapper or the agent, or the agent is not recording. Otherwise the thread is marked,
  // the event-pair start is recorded for GPU work in interposition mode, and the enter time taken.
  inline bool Begin(CudaApi api, uint64_t stream);

  // Records the call (ApiCallEvent + stack), applies its effect (pinned ranges, current device),
  // closes the event pair, and unmarks the thread. `params` is the row's params struct; `site`
  // the wrapper's return address and CFA (GS_CALL_SITE), so that a loop calling from one place
  // reuses its stack (ring_recorder.h, "Stack reuse").
  void End(int result, const CudaCallFacts& facts, const void* params, const CallSite& site)
      __attribute__((noinline));

 private:
  bool BeginSlow(CudaApi api, uint64_t stream, CaptureThreadState& state);

  CaptureThreadState* state_ = nullptr;
  Recorder* recorder_ = nullptr;
  CaptureSource* source_ = nullptr;
  uint64_t enter_ns_ = 0;
  uint64_t stream_ = 0;
  CudaApi api_ = CudaApi::kCount;
  bool paired_ = false;
};

inline bool InterposedCall::Begin(CudaApi api, uint64_t stream) {
  CaptureThreadState& state = ThisThreadCaptureState();
  if (state.interposer_depth != 0) return false;
  return BeginSlow(api, stream, state);
}

}  // namespace shim
}  // namespace gs

#endif  // GPUSTALL_SHIM_INTERPOSED_CALL_H_
