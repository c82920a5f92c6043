// cupti_other_calls_test.cc — runtime calls outside cuda_api.def (cudaGetDeviceProperties,
// cudaDeviceGetAttribute, cudaFuncSetAttribute, cudaStreamIsCapturing, ...) reach the agent
// through CUPTI's runtime domain: one that lasts at least the threshold is recorded, class
// "other", with its stack and CUPTI's name; shorter ones are only counted; -1 leaves them out.
// Calls that only read per-thread state (cudaGetLastError, cudaGetDevice) are never subscribed to.
// Calls of the table are recorded as before in every case. simgpu's runtime and CUPTI in process,
// the agent's real ring recorder; each test in its own process (CUPTI has one subscriber).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "agent/capture/cuda_api/cuda_api.h"
#include "agent/cupti/cupti_session.h"
#include "agent/cupti/simgpu_cupti_rig.h"
#include "simgpu.h"

namespace gs {
namespace {

struct Call {
  std::string name;
  ApiClass api_class;
  uint64_t duration_ns;
  int pcs;
};

std::vector<Call> DrainRuntimeCalls(RingPool& pool) {
  std::vector<Call> calls;
  for (size_t r = 0; r < pool.ring_count(); ++r) {
    pool.ring(r).ring.Drain([&](const RingRecordHeader& h) {
      const ApiCallView v = RingRecorder::View(h);
      if (v.event->source != ApiSource::kCuptiCallback) return;
      const char* name = CudaApiName(v.event->source, v.event->api_id);
      if (name == nullptr) name = CuptiSession::CallbackName(v.event->source, v.event->api_id);
      calls.push_back(Call{name != nullptr ? name : "?", v.event->api_class,
                           v.event->exit_ns - v.event->enter_ns, v.pc_count});
    });
  }
  return calls;
}

// What a framework does around its launches: device queries, a kernel attribute, capture
// checks, the last error; then one launch and a synchronisation from the table.
void FrameworkStep() {
  cudaDeviceProp prop;
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  int sms = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  const void* kernel = simgpuKernel("framework_kernel", 1000);
  ASSERT_EQ(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024), cudaSuccess);
  cudaStreamCaptureStatus status;
  ASSERT_EQ(cudaStreamIsCapturing(nullptr, &status), cudaSuccess);
  dim3 one{1, 1, 1};
  ASSERT_EQ(cudaLaunchKernel(kernel, one, one, nullptr, 0, nullptr), cudaSuccess);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
}

std::vector<std::string> Names(const std::vector<Call>& calls, bool other) {
  std::vector<std::string> names;
  for (const Call& c : calls)
    if ((c.api_class == ApiClass::kOther) == other) names.push_back(c.name);
  return names;
}

TEST(CuptiOtherCallsTest, EveryRuntimeCallIsRecordedAtThresholdZero) {
  SimgpuCuptiRig rig;
  ASSERT_EQ(rig.Start(0), "");
  FrameworkStep();
  rig.source->Stop();
  const std::vector<Call> calls = DrainRuntimeCalls(rig.pool);
  EXPECT_EQ(Names(calls, false), (std::vector<std::string>{"cudaLaunchKernel", "cudaStreamSynchronize"}));
  EXPECT_EQ(Names(calls, true),
            (std::vector<std::string>{"cudaGetDeviceProperties", "cudaDeviceGetAttribute", "cudaFuncSetAttribute",
                                      "cudaStreamIsCapturing"}));  // not cudaGetLastError (below)
  for (const Call& c : calls) EXPECT_GT(c.pcs, 1) << c.name << ": its own stack";
  EXPECT_EQ(rig.recorder->unrecorded_calls(), 0u);
}

TEST(CuptiOtherCallsTest, ShorterCallsAreOnlyCounted) {
  SimgpuCuptiRig rig;
  ASSERT_EQ(rig.Start(60000000000), "");  // a minute: every call here is shorter
  FrameworkStep();
  FrameworkStep();
  rig.source->Stop();
  const std::vector<Call> calls = DrainRuntimeCalls(rig.pool);
  EXPECT_EQ(Names(calls, true), std::vector<std::string>{});
  EXPECT_EQ(Names(calls, false).size(), 4u);  // the table's, recorded whatever their length
  EXPECT_EQ(rig.recorder->unrecorded_calls(), 8u);  // 4 per step
  EXPECT_GT(rig.recorder->unrecorded_call_ns(), 0u);
}

TEST(CuptiOtherCallsTest, MinusOneLeavesThemOut) {
  SimgpuCuptiRig rig;
  ASSERT_EQ(rig.Start(-1), "");
  FrameworkStep();
  rig.source->Stop();
  const std::vector<Call> calls = DrainRuntimeCalls(rig.pool);
  EXPECT_EQ(Names(calls, true), std::vector<std::string>{});
  EXPECT_EQ(Names(calls, false), (std::vector<std::string>{"cudaLaunchKernel", "cudaStreamSynchronize"}));
  EXPECT_EQ(rig.recorder->unrecorded_calls(), 0u);
}

}  // namespace
}  // namespace gs
