// cupti_driver_calls_test.cc — driver calls made outside every runtime call (a Triton-style
// launcher: a cubin loaded with cuModuleLoadData, cuLaunchKernelEx) are recorded from CUPTI's
// DRIVER_API callbacks with their own correlation ids, which their kernels and copies carry; a
// runtime call's own driver calls (simgpu reports them nested, as tests/simgpu/CUPTI_CORRELATION.md
// says CUPTI does) are not recorded a second time. simgpu's libcuda.so.1, runtime and CUPTI in
// process, the agent's real ring recorder. Its own process: CUPTI has one subscriber.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
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
  ApiSource source;
  ApiClass api_class;
  uint32_t correlation;
  uint64_t stream;
  int pcs;
};

std::vector<Call> DrainCalls(RingPool& pool) {
  std::vector<Call> calls;
  for (size_t r = 0; r < pool.ring_count(); ++r) {
    pool.ring(r).ring.Drain([&](const RingRecordHeader& h) {
      const ApiCallView v = RingRecorder::View(h);
      const char* name = CudaApiName(v.event->source, v.event->api_id);
      if (name == nullptr) name = CuptiSession::CallbackName(v.event->source, v.event->api_id);
      calls.push_back(Call{name != nullptr ? name : "?", v.event->source, v.event->api_class,
                           v.event->correlation_id, v.event->stream, v.pc_count});
    });
  }
  return calls;
}

#define CU_OK(call) ASSERT_EQ((call), CUDA_SUCCESS) << #call

// What a JIT launcher does before its first launch: the primary context made current, the cubin
// loaded with cuModuleLoadData, its kernel found.
void LoadTritonAdd(CUfunction* add) {
  CU_OK(cuInit(0));
  CUdevice device;
  CU_OK(cuDeviceGet(&device, 0));
  CUcontext context;
  CU_OK(cuDevicePrimaryCtxRetain(&context, device));
  CU_OK(cuCtxSetCurrent(context));
  std::ifstream in(DRIVER_CUBIN, std::ios::binary);
  const std::string image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(image.empty()) << DRIVER_CUBIN;
  CUmodule module;
  CU_OK(cuModuleLoadData(&module, image.data()));
  CU_OK(cuModuleGetFunction(add, module, "triton_add"));
}

TEST(CuptiDriverCallsTest, DirectDriverCallsAreRecordedOnceAndRuntimeCallsOwnTheirDriverCalls) {
  SimgpuCuptiRig rig;
  ASSERT_EQ(rig.Start(), "");

  // A JIT launcher's set-up: none of it is in cuda_driver_api.def but the allocations.
  CUfunction add = nullptr;
  ASSERT_NO_FATAL_FAILURE(LoadTritonAdd(&add));
  const int n = 1 << 12;
  CUdeviceptr bufs[3];
  for (CUdeviceptr& b : bufs) CU_OK(cuMemAlloc_v2(&b, n * sizeof(float)));
  CUstream stream;
  CU_OK(cuStreamCreate(&stream, 0));
  std::vector<float> host(n, 1.0f);

  // One step of the launcher: copy in, launch with a CUlaunchConfig, synchronise.
  CU_OK(cuMemcpyHtoDAsync_v2(bufs[0], host.data(), n * sizeof(float), stream));
  int count = n;
  void* args[] = {&bufs[0], &bufs[1], &bufs[2], &count};
  CUlaunchConfig config{};
  config.gridDimX = n / 256;
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = 256;
  config.blockDimY = config.blockDimZ = 1;
  config.hStream = stream;
  CU_OK(cuLaunchKernelEx(&config, add, args, nullptr));
  CU_OK(cuStreamSynchronize(stream));

  // The runtime on the same thread: its nested cuLaunchKernel / cuStreamSynchronize are its own.
  cudaStream_t rt_stream;
  ASSERT_EQ(cudaStreamCreate(&rt_stream), cudaSuccess);
  dim3 one{1, 1, 1};
  ASSERT_EQ(cudaLaunchKernel(simgpuKernel("runtime_kernel", 1000), one, one, nullptr, 0, rt_stream),
            cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(rt_stream), cudaSuccess);
  rig.source->Stop();

  const std::vector<Call> calls = DrainCalls(rig.pool);
  std::vector<std::string> driver, runtime;
  const Call* launch_ex = nullptr;
  const Call* copy = nullptr;
  const Call* rt_launch = nullptr;
  for (const Call& c : calls) {
    if (c.source == ApiSource::kCuptiDriverCallback && c.api_class != ApiClass::kOther) driver.push_back(c.name);
    // Calls outside the tables (cudaStreamCreate, cuModuleLoadData) are recorded too when they
    // last 10 µs or more, which a call may or may not: the test below and
    // cupti_other_calls_test.cc check those.
    if (c.source == ApiSource::kCuptiCallback && c.api_class != ApiClass::kOther) runtime.push_back(c.name);
    if (c.name == "cuLaunchKernelEx") launch_ex = &c;
    if (c.name == "cuMemcpyHtoDAsync_v2") copy = &c;
    if (c.name == "cudaLaunchKernel") rt_launch = &c;
  }
  EXPECT_EQ(driver, (std::vector<std::string>{"cuMemAlloc_v2", "cuMemAlloc_v2", "cuMemAlloc_v2",
                                              "cuMemcpyHtoDAsync_v2", "cuLaunchKernelEx",
                                              "cuStreamSynchronize"}));
  EXPECT_EQ(runtime, (std::vector<std::string>{"cudaLaunchKernel", "cudaStreamSynchronize"}));
  ASSERT_NE(launch_ex, nullptr);
  ASSERT_NE(copy, nullptr);
  ASSERT_NE(rt_launch, nullptr);
  EXPECT_EQ(launch_ex->api_class, ApiClass::kLaunch);
  EXPECT_EQ(launch_ex->stream, reinterpret_cast<uintptr_t>(stream));
  EXPECT_GT(launch_ex->pcs, 0);  // its own stack, like a runtime call's
  EXPECT_EQ(copy->api_class, ApiClass::kMemcpy);
  EXPECT_NE(launch_ex->correlation, 0u);
  EXPECT_NE(launch_ex->correlation, copy->correlation);
  EXPECT_NE(launch_ex->correlation, rt_launch->correlation);

  // Each kernel and the copy carry the correlation id of the call that submitted it.
  std::vector<PendingActivity> activities;
  rig.recorder->activities().TakeAll(&activities);
  std::map<std::string, uint32_t> kernel_correlation;
  uint32_t copy_correlation = 0;
  for (const PendingActivity& a : activities) {
    if (a.activity.kind == ActivityKind::kKernel) {
      kernel_correlation[rig.recorder->activities().NameAt(a.name_index)] = a.activity.correlation_id;
    }
    if (a.activity.kind == ActivityKind::kMemcpy) copy_correlation = a.activity.correlation_id;
  }
  EXPECT_EQ(kernel_correlation["triton_add"], launch_ex->correlation);
  EXPECT_EQ(kernel_correlation["runtime_kernel"], rt_launch->correlation);
  EXPECT_EQ(copy_correlation, copy->correlation);
}

// The driver's other calls (GS_OTHER_CALLS_MIN_US=0 here: every one): a JIT launcher's
// context and module calls are recorded, class other, with their stacks and CUPTI's names; a
// runtime call's own driver calls are still its own (cudaStreamCreate's cuStreamCreate).
TEST(CuptiDriverCallsTest, OtherDirectDriverCallsAreRecordedAsOther) {
  SimgpuCuptiRig rig;
  ASSERT_EQ(rig.Start(0), "");
  CUfunction add = nullptr;
  ASSERT_NO_FATAL_FAILURE(LoadTritonAdd(&add));
  CUcontext current = nullptr;
  CU_OK(cuCtxGetCurrent(&current));  // reads per-thread state: never subscribed to
  cudaStream_t rt_stream;
  ASSERT_EQ(cudaStreamCreate(&rt_stream), cudaSuccess);
  rig.source->Stop();

  std::vector<std::string> driver_other, runtime_other;
  for (const Call& c : DrainCalls(rig.pool)) {
    if (c.api_class != ApiClass::kOther) continue;
    (c.source == ApiSource::kCuptiDriverCallback ? driver_other : runtime_other).push_back(c.name);
    EXPECT_GT(c.pcs, 1) << c.name << ": its own stack";
  }
  for (const char* expected : {"cuDeviceGet", "cuDevicePrimaryCtxRetain", "cuCtxSetCurrent", "cuModuleLoadData",
                               "cuModuleGetFunction"})
    EXPECT_NE(std::find(driver_other.begin(), driver_other.end(), expected), driver_other.end()) << expected;
  EXPECT_EQ(std::find(driver_other.begin(), driver_other.end(), "cuCtxGetCurrent"), driver_other.end());
  EXPECT_EQ(std::find(driver_other.begin(), driver_other.end(), "cuStreamCreate"), driver_other.end());
  EXPECT_EQ(runtime_other, std::vector<std::string>{"cudaStreamCreate"});
}

}  // namespace
}  // namespace gs
