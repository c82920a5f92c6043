// simgpu_cupti_rig.h — what an in-process CUPTI test of the agent sets up (tests only): the agent's
// real ring pool, libunwind stack capture and ring recorder, and a GpuCaptureSource on simgpu's
// libcupti.so.13 (SIMGPU_LIB_DIR, a compile definition of the test). One per process: CUPTI has
// one subscriber.
#ifndef GPUSTALL_AGENT_CUPTI_SIMGPU_CUPTI_RIG_H_
#define GPUSTALL_AGENT_CUPTI_SIMGPU_CUPTI_RIG_H_

#include <memory>
#include <string>

#include "agent/cupti/gpu_capture_source.h"
#include "agent/record/ring_recorder.h"

namespace gs {

struct SimgpuCuptiRig {
  RingPool pool;
  StackCapturer capturer;
  std::unique_ptr<RingRecorder> recorder;
  std::unique_ptr<GpuCaptureSource> source;

  // "" once CUPTI records into `recorder`; else what failed. `other_calls_min_ns`: the
  // session's threshold for runtime calls outside the table (CuptiSession::Options).
  std::string Start(int64_t other_calls_min_ns = CuptiSession::Options().other_calls_min_ns) {
    if (!pool.Init(4 * 1024 * 1024)) return "ring pool";
    std::string note;
    if (capturer.Init(StackMode::kUnwind, &note) != StackMode::kUnwind) return "libunwind: " + note;
    recorder = std::make_unique<RingRecorder>(&pool, &capturer, 32, 4096);
    GpuCaptureSource::Options options;
    options.cupti.library_path = std::string(SIMGPU_LIB_DIR) + "/libcupti.so.13";
    options.cupti.other_calls_min_ns = other_calls_min_ns;
    source = std::make_unique<GpuCaptureSource>(options);
    return source->Start(*recorder) ? "" : "GpuCaptureSource::Start";
  }
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_CUPTI_SIMGPU_CUPTI_RIG_H_
