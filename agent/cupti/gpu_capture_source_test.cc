// gpu_capture_source_test.cc — the capture source against simgpu's libcudart and libcupti, in
// process (no LD_PRELOAD, no agent core): what reaches the Recorder in CUPTI mode and in
// event-pair mode. SIMGPU_LIB_DIR comes from the build.
#include "agent/cupti/gpu_capture_source.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "agent/core/clock.h"
#include "agent/capture/capture_thread_state.h"
#include "simgpu.h"

namespace gs {
namespace {

class MemoryRecorder : public Recorder {
 public:
  bool enabled() const override { return true; }
  void RecordApiCall(const ApiCallEvent& event, bool, int) override {
    std::lock_guard<std::mutex> lock(mu);
    calls.push_back(event);
  }
  void RecordGpuActivity(const GpuActivityEvent& activity) override {
    std::lock_guard<std::mutex> lock(mu);
    activities.push_back(activity);
    names.push_back(activity.name ? activity.name : "");
  }
  void AddDropped(uint64_t cupti, uint64_t other) override { dropped += cupti + other; }
  void SetCaptureMode(const char* m, const char* d) override {
    mode = m;
    detail = d;
  }
  std::mutex mu;
  std::vector<ApiCallEvent> calls;
  std::vector<GpuActivityEvent> activities;
  std::vector<std::string> names;
  uint64_t dropped = 0;
  std::string mode, detail;
};

// One source per process (CUPTI has one subscriber): CUPTI mode first, then the event pairs on a
// second source that is told not to use CUPTI.
TEST(GpuCaptureSourceTest, CuptiThenEventPairs) {
  MemoryRecorder recorder;
  GpuCaptureSource::Options options;
  options.cupti.library_path = std::string(SIMGPU_LIB_DIR) + "/libcupti.so.13";
  GpuCaptureSource source(options);
  ASSERT_TRUE(source.Start(recorder));
  EXPECT_EQ(recorder.mode, "cupti") << recorder.detail;
  EXPECT_FALSE(source.wants_event_pairs());

  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  const void* kernel = simgpuKernel("capture_test_kernel", 1000000);
  dim3 grid{1, 1, 1}, block{1, 1, 1};
  const uint64_t before = MonotonicNs();
  ASSERT_EQ(cudaLaunchKernel(kernel, grid, block, nullptr, 0, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  const uint64_t after = MonotonicNs();
  source.Flush(true);

  // The launch was not seen by a wrapper, so the CUPTI callback recorded it, and the kernel record
  // carries the same correlation id, on the agent's clock.
  uint32_t launch_corr = 0;
  for (const ApiCallEvent& c : recorder.calls) {
    if (c.api_class == ApiClass::kLaunch) {
      EXPECT_EQ(c.source, ApiSource::kCuptiCallback);
      EXPECT_EQ(c.stream, reinterpret_cast<uintptr_t>(stream));
      launch_corr = c.correlation_id;
    }
  }
  ASSERT_NE(launch_corr, 0u);
  bool found = false;
  for (size_t i = 0; i < recorder.activities.size(); ++i) {
    const GpuActivityEvent& a = recorder.activities[i];
    if (a.kind != ActivityKind::kKernel) continue;
    found = true;
    EXPECT_EQ(a.correlation_id, launch_corr);
    EXPECT_EQ(recorder.names[i], "capture_test_kernel");
    EXPECT_GE(a.start_ns, before);
    EXPECT_LE(a.end_ns, after);
    EXPECT_NEAR(static_cast<double>(a.end_ns - a.start_ns), 1e6, 1e4);
  }
  EXPECT_TRUE(found);

  // Inside a wrapper, the callback only hands over the correlation id.
  {
    ScopedAgentCudaCall inside;
    ASSERT_EQ(cudaLaunchKernel(kernel, grid, block, nullptr, 0, stream), cudaSuccess);
    EXPECT_NE(source.TakeCorrelationId(), 0u);
    EXPECT_EQ(source.TakeCorrelationId(), 0u);  // taking clears it
  }
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  source.Stop();

  // Event pairs (GS_CUPTI=off).
  MemoryRecorder pair_recorder;
  GpuCaptureSource::Options off;
  off.use_cupti = false;
  GpuCaptureSource fallback(off);
  ASSERT_TRUE(fallback.Start(pair_recorder));
  EXPECT_EQ(pair_recorder.mode, "interposition");
  ASSERT_TRUE(fallback.wants_event_pairs());
  ApiCallEvent call{};
  call.api_class = ApiClass::kLaunch;
  const uint64_t pair_before = MonotonicNs();
  {
    ScopedAgentCudaCall inside;
    fallback.BeforeGpuWork(reinterpret_cast<uintptr_t>(stream));
    ASSERT_EQ(cudaLaunchKernel(kernel, grid, block, nullptr, 0, stream), cudaSuccess);
    KernelLaunchShape shape;
    shape.grid[0] = grid.x, shape.grid[1] = grid.y, shape.grid[2] = grid.z;
    shape.block[0] = block.x, shape.block[1] = block.y, shape.block[2] = block.z;
    shape.dynamic_shared_bytes = 0;
    fallback.AfterGpuWork(reinterpret_cast<uintptr_t>(stream), 0x80000007u, call, &shape);
  }
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  const uint64_t pair_after = MonotonicNs();
  fallback.Flush(true);
  fallback.Stop();
  std::lock_guard<std::mutex> lock(pair_recorder.mu);
  ASSERT_EQ(pair_recorder.activities.size(), 1u);
  const GpuActivityEvent& a = pair_recorder.activities[0];
  EXPECT_EQ(a.source, ActivitySource::kEventPair);
  EXPECT_EQ(a.kind, ActivityKind::kKernel);
  EXPECT_EQ(a.correlation_id, 0x80000007u);
  EXPECT_GE(a.start_ns + 50000, pair_before);
  EXPECT_LE(a.end_ns, pair_after + 50000);
  EXPECT_NEAR(static_cast<double>(a.end_ns - a.start_ns), 1e6, 2e5);
  EXPECT_NE(a.stream_id, 0u);
  // The launch's configuration; the kernel's resources are not the call's to say.
  EXPECT_EQ(a.launch_flags, kLaunchConfigKnown);
  EXPECT_EQ(a.grid[0], grid.x);
  EXPECT_EQ(a.block[0], block.x);
}

}  // namespace
}  // namespace gs
