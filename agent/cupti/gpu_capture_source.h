// gpu_capture_source.h — the agent's CaptureSource: CUPTI when it can be had, else the event-pair
// fallback (interposition mode).
//
// Start tries CUPTI (unless GS_CUPTI=off). If libcupti is missing, too old, or cuptiSubscribe fails
// (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED when Kineto, Nsight Systems or DCGM hold it — the
// holder is named; CUPTI_ERROR_UNKNOWN on a machine without a driver), it says so once on stderr
// (`gpustall: ...`), records the capture mode in the trace, and times the work the shim intercepts
// with event pairs instead.
//
// Thread safety: as CaptureSource (agent/capture/capture_source.h). TakeCorrelationId, wants_event_pairs,
// BeforeGpuWork and AfterGpuWork are called on application threads, concurrently.
#ifndef GPUSTALL_AGENT_CUPTI_GPU_CAPTURE_SOURCE_H_
#define GPUSTALL_AGENT_CUPTI_GPU_CAPTURE_SOURCE_H_

#include <atomic>
#include <string>

#include "agent/capture/capture_source.h"
#include "agent/cupti/cupti_session.h"
#include "agent/capture/event_pair_timer.h"

namespace gs {

struct Config;

class GpuCaptureSource final : public CaptureSource {
 public:
  struct Options {
    bool use_cupti = true;            // GS_CUPTI != off
    CuptiSession::Options cupti;
  };

  explicit GpuCaptureSource(const Options& options) : options_(options) {}

  bool Start(Recorder& recorder) override;
  void Flush(bool forced) override;
  void Stop() override;
  void OnForkChild() override;
  void Pause() override;
  bool Resume(Recorder& recorder) override;
  uint32_t TakeCorrelationId() override;
  bool wants_event_pairs() const override { return event_pairs_.load(std::memory_order_acquire); }
  void BeforeGpuWork(uint64_t stream) override { timer_.BeforeGpuWork(stream); }
  void OnStreamWait(uint64_t) override { timer_.OnStreamWait(); }
  void AfterGpuWork(uint64_t stream, uint32_t correlation_id, const ApiCallEvent& call,
                    const KernelLaunchShape* launch) override {
    timer_.AfterGpuWork(stream, correlation_id, call, launch);
  }

  bool cupti_active() const { return cupti_.active(); }
  // The `detail` handed to Recorder::SetCaptureMode (kept alive here for the recorder).
  const std::string& mode_detail() const { return detail_; }

 private:
  Options options_;
  CuptiSession cupti_;
  EventPairTimer timer_;
  std::atomic<bool> event_pairs_{false};
  std::atomic<bool> cupti_correlation_{false};
  bool paused_event_pairs_ = false;  // Pause() switched event pairs off (Resume switches them on)
  std::string detail_;
};

// The CaptureSourceFactory the shim registers with the agent (agent/core/agent.h): builds the source
// from the validated Config (GS_CUPTI, GS_CUPTI_LIBRARY, GS_STACKS).
CaptureSource* MakeGpuCaptureSource(const Config& config);

}  // namespace gs

#endif  // GPUSTALL_AGENT_CUPTI_GPU_CAPTURE_SOURCE_H_
