// capture_source.h — a source of GPU-side truth (CUPTI, or the event-pair fallback), owned by the
// Agent and started when the agent activates.
//
// The Agent (agent/core/agent.h) owns exactly one CaptureSource and drives its lifecycle; the source
// writes into the Recorder it was started with and never outlives the Agent.
//
// Thread safety: Start/Flush/Stop are called by the agent's control path (activation, the writer
// thread's periodic flush, atexit/exec), serialised by the Agent. OnForkChild runs in the child
// right after fork, single-threaded, and must not call CUDA or CUPTI (it can hang there).
#ifndef GPUSTALL_AGENT_CAPTURE_CAPTURE_SOURCE_H_
#define GPUSTALL_AGENT_CAPTURE_CAPTURE_SOURCE_H_

#include <cstdint>

#include "agent/capture/cuda_api/cuda_api.h"
#include "agent/record/recorder.h"

namespace gs {

class CaptureSource {
 public:
  virtual ~CaptureSource() = default;

  // Starts capturing into `recorder`. Called once, when the agent activates (InitializeInjection,
  // or the first intercepted CUDA call). Returns false if nothing could be started; the source
  // then reports why through recorder.SetCaptureMode and one `gpustall:` line on stderr.
  virtual bool Start(Recorder& recorder) = 0;

  // Hands everything buffered to the recorder (CUPTI: cuptiActivityFlushAll). `forced` also
  // flushes incomplete buffers (at exit/exec).
  virtual void Flush(bool forced) = 0;

  // Stops capturing; after it returns the source calls the recorder no more.
  virtual void Stop() = 0;

  // In a forked child: forget all state without calling CUDA or CUPTI, and leak rather than free
  // anything another thread might have been using.
  virtual void OnForkChild() = 0;

  // On-demand capture windows (GS_ON_DEMAND=1). Pause ends a window: everything captured so far
  // reaches the recorder (forced flush), then whatever costs the application while nobody
  // records (CUPTI callbacks and activity kinds) is switched off. Resume starts the next window
  // into the same recorder Start was given, saying the capture mode again (each window's trace
  // has its own header). The defaults suit a source that cannot pause: Pause stops it for good
  // and Resume fails (the agent then records host calls only).
  virtual void Pause() {
    Flush(true);
    Stop();
  }
  virtual bool Resume(Recorder& recorder) {
    (void)recorder;
    return false;
  }

  // --- Interposition support: the shim calls these around the GPU work it intercepts. ---

  // The CUPTI correlation id of the API call the calling thread is inside right now (set by the
  // CUPTI ENTER callback), or 0 when CUPTI is not running. Reading it clears it.
  virtual uint32_t TakeCorrelationId() = 0;

  // True when the source times GPU work itself with event pairs (CUPTI unavailable); the shim then
  // calls BeforeGpuWork/AfterGpuWork around launches, copies and memsets on `stream`.
  virtual bool wants_event_pairs() const = 0;
  virtual void BeforeGpuWork(uint64_t stream) = 0;
  // `launch`: a kernel launch's configuration (nullptr for other work).
  virtual void AfterGpuWork(uint64_t stream, uint32_t correlation_id, const ApiCallEvent& call,
                            const KernelLaunchShape* launch) = 0;
  // Before a call that makes `stream` wait for other work (cudaStreamWaitEvent), when
  // wants_event_pairs(): the next work there may start later than its stream's previous work.
  virtual void OnStreamWait(uint64_t stream) { (void)stream; }
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_CAPTURE_CAPTURE_SOURCE_H_
