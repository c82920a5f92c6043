// cupti_session.h — the agent's CUPTI subscription: callbacks on the runtime API and activity
// records, both delivered to a Recorder on the agent's clock.
//
// Start follows agent/cupti/NOTES.md §7: load libcupti (dlopen), register a CLOCK_MONOTONIC timestamp
// callback BEFORE enabling any activity kind (so every record is on the agent's clock), thread id
// type SYSTEM, cuptiSubscribe_v2 under the name "gpustall", activity buffer callbacks served from
// a bounded pool, the activity kinds, the runtime-API callbacks of every function in
// agent/capture/cuda_api/cuda_api.def, and a periodic flush.
//
// Callbacks (application threads, inside the real runtime or driver function):
//   * API_ENTER inside a shim wrapper: stash the correlation id for the wrapper
//     (TakeCorrelationId) — the wrapper records the call;
//   * otherwise (a runtime the shim cannot see: static cudart, library-embedded runtimes, ctypes):
//     remember the enter time in correlationData and, at API_EXIT, record the call itself
//     (ApiSource::kCuptiCallback) with its stack;
//   * a driver function of agent/capture/cuda_api/cuda_driver_api.def called outside every runtime
//     call (Triton's launcher, cuGetProcAddress users, the expandable-segments allocator):
//     recorded the same way (ApiSource::kCuptiDriverCallback); inside a runtime call or another
//     recorded driver call it is that call's own and is ignored.
// Activity buffers (CUPTI's thread, or a flushing thread): records → GpuActivityEvent → Recorder.
//
// Thread safety: Start/Flush/Stop are serialised by the owner. At most one session per process
// (CUPTI allows one subscriber). OnForkChild never calls CUPTI.
#ifndef GPUSTALL_AGENT_CUPTI_CUPTI_SESSION_H_
#define GPUSTALL_AGENT_CUPTI_CUPTI_SESSION_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "agent/capture/cuda_api/cuda_api.h"
#include "agent/cupti/activity_buffer_pool.h"
#include "agent/cupti/activity_converter.h"
#include "agent/cupti/cupti_library.h"
#include "agent/record/recorder.h"

namespace gs {

class CuptiSession {
 public:
  struct Options {
    std::string library_path;          // GS_CUPTI_LIBRARY ("": search)
    int buffer_count = 8;              // activity buffers in the pool
    size_t buffer_bytes = 2u << 20;    // bytes per buffer (CUPTI recommends 1-10 MiB)
    uint32_t flush_period_ms = 100;    // cuptiActivityFlushPeriod: bounds how long records wait
    bool capture_stacks = true;        // for calls recorded from callbacks
    // Runtime and driver calls outside cuda_api.def and cuda_driver_api.def
    // (GS_OTHER_CALLS_MIN_US): recorded, as class "other",
    // when they last at least this long; shorter ones only counted. -1: not subscribed to.
    int64_t other_calls_min_ns = 10000;
  };

  // Why Start failed, for the one `gpustall:` line and the trace's capture mode.
  struct Failure {
    std::string what;        // e.g. "cuptiSubscribe: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
    std::string holder;      // the subscriber that holds CUPTI, when CUPTI names it
    bool multiple_subscribers = false;
  };

  CuptiSession() = default;
  CuptiSession(const CuptiSession&) = delete;
  CuptiSession& operator=(const CuptiSession&) = delete;

  // Returns true when CUPTI is subscribed and recording. On false nothing stays enabled and
  // `failure` says why. `recorder` must outlive the session.
  bool Start(Recorder& recorder, const Options& options, Failure* failure);
  // cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0).
  void Flush(bool forced);
  // Final forced flush; afterwards nothing reaches the recorder.
  void Stop();
  // Between on-demand windows: callbacks and activity kinds off, then a forced flush of what was
  // recorded; stays subscribed (CUPTI allows one subscriber: keeping the slot is what makes
  // Resume possible). Resume switches them on again; false if CUPTI refuses (then paused still).
  void Pause();
  bool Resume();
  bool paused() const { return state_.load(std::memory_order_acquire) == kPaused; }
  // After fork, in the child: CUPTI is dead here; never call it again.
  void OnForkChild();

  bool active() const { return state_.load(std::memory_order_acquire) == kRunning; }
  const std::string& library_path() const { return library_.path; }
  uint32_t library_version() const { return library_.version; }
  int library_major() const { return library_.major; }

  // The correlation id stashed by API_ENTER for the calling thread's current wrapper (0 if none);
  // clears it.
  static uint32_t TakeCorrelationId();

  // The trace's name of a CUPTI runtime or driver cbid that cuda_api.def and cuda_driver_api.def
  // do not have, from the loaded CUPTI's cuptiGetCallbackName without its version suffix
  // ("cudaFuncSetAttribute_v9000" -> "cudaFuncSetAttribute"); nullptr when no CUPTI was loaded
  // or it has no name. For the writer thread (the result lives in a thread-local buffer until
  // the next call).
  static const char* CallbackName(ApiSource source, uint16_t cbid);

 private:
  enum State : int { kIdle = 0, kRunning = 1, kStopped = 2, kDead = 3, kPaused = 4 };
  // Callbacks on/off for every recorded runtime function of the shim's table (the whole runtime
  // domain while other calls are recorded, Options::other_calls_min_ns) and every driver function
  // of cuda_driver_api.def.
  void EnableApiCallbacks(bool enable);
  // The whole `domain` on or off, less `left_out` when on; false (nothing changed) where other
  // calls are not wanted (Options::other_calls_min_ns < 0) or CUPTI refuses.
  bool EnableWholeDomain(CUpti_CallbackDomain domain, bool enable, const CUpti_CallbackId* left_out,
                         size_t left_out_count);

  __attribute__((noinline)) static void CUPTIAPI OnCallback(void* userdata, CUpti_CallbackDomain domain,
                                                            CUpti_CallbackId cbid, const void* cbdata);
  static void CUPTIAPI OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI OnBufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                         size_t size, size_t valid_size);
  // `site`: OnCallback's return address into CUPTI's dispatcher and its stack pointer, the call
  // site of the record (ring_recorder.h, "Stack reuse"): a loop that calls the runtime past the
  // shim's wrappers (Python's ctypes) then unwinds once per site, not once per call. Not inlined,
  // so that the two frames the record skips are this function and OnCallback.
  __attribute__((noinline)) void HandleRuntimeCallback(CUpti_CallbackId cbid, const CUpti_CallbackData* data,
                                                       const CallSite& site);
  // A driver call: recorded only when the thread is inside no runtime call and no other recorded
  // driver call (a runtime call's own driver calls are that call's: CUPTI gives them its
  // correlation id, tests/simgpu/CUPTI_CORRELATION.md facts 5-6). Same frames rule as above.
  __attribute__((noinline)) void HandleDriverCallback(CUpti_CallbackId cbid, const CUpti_CallbackData* data,
                                                      const CallSite& site);
  // The API_EXIT half the two handlers share: the call's effect, then its record. Always inlined
  // into them, so that the frames a record skips stay two (the handler and OnCallback).
  __attribute__((always_inline)) inline void FinishCall(const CudaApiInfo& info, const CudaCallFacts& facts,
                                                        int result, const CUpti_CallbackData& data,
                                                        ApiSource source, CUpti_CallbackId cbid,
                                                        uint64_t exit_ns, const CallSite& site);
  // GRAPHNODE_CREATED / GRAPHNODE_CLONED: the node, the node it copies, or the call it was made in.
  void HandleGraphNodeCallback(CUpti_CallbackId cbid, const CUpti_ResourceData* data);
  // A call outside both tables at API_EXIT: recorded as class other, or counted when shorter
  // than Options::other_calls_min_ns. Always inlined into the handlers, as FinishCall.
  __attribute__((always_inline)) inline void FinishOtherCall(const CUpti_CallbackData& data, ApiSource source,
                                                             CUpti_CallbackId cbid, uint64_t exit_ns,
                                                             const CallSite& site);
  void ConvertBuffer(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t valid_size);
  uint32_t DeviceOf(CUcontext context);
  std::string ResultName(CUptiResult result) const;
  void Abandon();

  CuptiLibrary library_;
  Options options_;
  Recorder* recorder_ = nullptr;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  ActivityBufferPool pool_;
  ActivityConverter converter_;  // used under convert_busy_ (one buffer at a time)
  std::atomic<bool> convert_busy_{false};
  std::atomic<int> state_{kIdle};
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_CUPTI_CUPTI_SESSION_H_
