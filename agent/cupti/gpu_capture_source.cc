// gpu_capture_source.cc
#include "agent/cupti/gpu_capture_source.h"

#include "agent/core/config/config.h"
#include "agent/capture/cuda_runtime_symbols.h"
#include "agent/capture/host_memory_map.h"
#include "agent/core/log.h"

namespace gs {

namespace {
// The file name of the CUDA runtime the process has mapped ("" for none): the trace says which.
std::string MappedRuntimeName() {
  const std::string path = FindMappedLibrary("libcudart.so");
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}
}  // namespace

bool GpuCaptureSource::Start(Recorder& recorder) {
  const std::string runtime = MappedRuntimeName();
  if (options_.use_cupti) {
    CuptiSession::Failure failure;
    if (cupti_.Start(recorder, options_.cupti, &failure)) {
      detail_ = cupti_.library_path() + " (CUDA " + std::to_string(cupti_.library_major()) + " CUPTI, API " +
                std::to_string(cupti_.library_version()) + ")";
      recorder.SetCaptureMode("cupti", detail_.c_str());
      recorder.SetCudaVersions(runtime.c_str(), static_cast<uint32_t>(cupti_.library_major()),
                               cupti_.library_version());
      cupti_correlation_.store(true, std::memory_order_release);
      return true;
    }
    if (failure.multiple_subscribers) {
      detail_ = failure.what + " (held by: " + (failure.holder.empty() ? "unknown tool" : failure.holder) + ")";
      Log(LogLevel::kWarn,
          "CUPTI is already in use by another tool (%s): %s; recording in interposition mode "
          "(event-pair timing of the GPU work this process submits through the CUDA runtime)",
          failure.holder.empty() ? "unknown tool" : failure.holder.c_str(), failure.what.c_str());
    } else {
      detail_ = failure.what;
      Log(LogLevel::kWarn,
          "CUPTI unavailable (%s); recording in interposition mode (event-pair timing of the GPU "
          "work this process submits through the CUDA runtime)",
          failure.what.c_str());
    }
  } else {
    detail_ = "GS_CUPTI=off";
  }
  recorder.SetCudaVersions(runtime.c_str(), 0, 0);
  if (!timer_.Start(recorder)) {
    detail_ += "; no CUDA event functions in the runtime: host calls only";
    recorder.SetCaptureMode("host-only", detail_.c_str());
    return false;
  }
  recorder.SetCaptureMode("interposition", detail_.c_str());
  event_pairs_.store(true, std::memory_order_release);
  return true;
}

void GpuCaptureSource::Flush(bool forced) {
  if (cupti_.active()) cupti_.Flush(forced);
  if (event_pairs_.load(std::memory_order_acquire)) timer_.Poll(forced);
}

void GpuCaptureSource::Stop() {
  cupti_.Stop();
  timer_.Stop();
  event_pairs_.store(false, std::memory_order_release);
}

void GpuCaptureSource::OnForkChild() {
  ProcessHostMemoryMap().OnForkChild();  // its writer lock may have been held by another thread
  cupti_.OnForkChild();
  timer_.OnForkChild();
  event_pairs_.store(false, std::memory_order_release);
  cupti_correlation_.store(false, std::memory_order_release);
}

void GpuCaptureSource::Pause() {
  if (cupti_.active()) cupti_.Pause();
  if (event_pairs_.exchange(false, std::memory_order_acq_rel)) {
    timer_.Poll(true);  // pairs of the window's last work; the poller thread stays (idle)
    paused_event_pairs_ = true;
  }
}

bool GpuCaptureSource::Resume(Recorder& recorder) {
  if (cupti_.paused()) {
    if (!cupti_.Resume()) return false;
    recorder.SetCaptureMode("cupti", detail_.c_str());
    return true;
  }
  if (paused_event_pairs_) {
    paused_event_pairs_ = false;
    event_pairs_.store(true, std::memory_order_release);
    recorder.SetCaptureMode("interposition", detail_.c_str());
    return true;
  }
  return false;
}

uint32_t GpuCaptureSource::TakeCorrelationId() {
  return cupti_correlation_.load(std::memory_order_relaxed) ? CuptiSession::TakeCorrelationId() : 0;
}

CaptureSource* MakeGpuCaptureSource(const Config& config) {
  GpuCaptureSource::Options options;
  options.use_cupti = config.cupti != CuptiMode::kOff;
  options.cupti.library_path = config.cupti_library;
  options.cupti.capture_stacks = config.stacks != StackMode::kNone;
  options.cupti.other_calls_min_ns =
      config.other_calls_min_us < 0 ? -1 : static_cast<int64_t>(config.other_calls_min_us) * 1000;
  // Owned by the Agent, never deleted (CUPTI's thread may call into it until exit).
  return new GpuCaptureSource(options);
}

}  // namespace gs
