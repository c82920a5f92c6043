// CUPTI's clock: CLOCK_REALTIME by default (Linux), or the tool's timestamp callback, for
// cuptiGetTimestamp and for every record's timestamps.
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <pthread.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "activity_collector.h"
#include "simgpu.h"

namespace {

constexpr uint64_t kToolClockOffset = 1000ull * 1000 * 1000 * 1000 * 1000;  // 1e15 ns

// A tool clock unlike any system clock: CLOCK_MONOTONIC shifted by 1e15 ns.
uint64_t CUPTIAPI ToolClock() { return cupti_test::MonotonicNs() + kToolClockOffset; }

TEST(TimestampTest, DefaultClockIsRealtime) {
  uint64_t before = cupti_test::RealtimeNs();
  uint64_t t = 0;
  ASSERT_CUPTI_OK(cuptiGetTimestamp(&t));
  uint64_t after = cupti_test::RealtimeNs();
  EXPECT_GE(t, before);
  EXPECT_LE(t, after);
  EXPECT_EQ(cuptiGetTimestamp(nullptr), CUPTI_ERROR_INVALID_PARAMETER);
}

TEST(TimestampTest, RecordsFollowTheRegisteredTimestampCallback) {
  ASSERT_CUPTI_OK(cuptiActivityRegisterTimestampCallback(ToolClock));  // before enabling, as documented
  cupti_test::StartCollecting();
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
  const uint64_t kDurationNs = 10 * 1000 * 1000;
  uint64_t before = ToolClock();
  uint64_t mono_before = simgpuNowNs();
  ASSERT_CUDA_OK(cudaLaunchKernel(simgpuKernel("cupti_clock_kernel", kDurationNs), dim3(1), dim3(1),
                                  nullptr, 0, nullptr));
  ASSERT_CUDA_OK(cudaDeviceSynchronize());
  uint64_t mono_after = simgpuNowNs();
  uint64_t after = ToolClock();
  uint64_t now = 0;
  ASSERT_CUPTI_OK(cuptiGetTimestamp(&now));
  EXPECT_GE(now, after) << "cuptiGetTimestamp reads the tool's clock";
  ASSERT_CUPTI_OK(cuptiActivityFlushAll(0));

  auto kernels = cupti_test::RecordsOfKind<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(kernels.size(), 1u);
  const uint64_t kSlack = 2 * 1000 * 1000;  // offset-pair error (microseconds), generous
  EXPECT_GE(kernels[0].start + kSlack, before);
  EXPECT_LE(kernels[0].end, after + kSlack);
  EXPECT_GE(kernels[0].end - kernels[0].start, kDurationNs - 1000);
  // The same instants on simgpu's clock (CLOCK_MONOTONIC) are the record minus the offset.
  EXPECT_GE(kernels[0].start - kToolClockOffset + kSlack, mono_before);
  EXPECT_LE(kernels[0].end - kToolClockOffset, mono_after + kSlack);
  auto launches = cupti_test::RuntimeRecords(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_GE(launches[0].start + kSlack, before);
  EXPECT_LE(launches[0].end, kernels[0].end);
  cuptiFinalize();
}

TEST(TimestampTest, ThreadIdTypeSwitchesBetweenPthreadAndSystemIds) {
  CUpti_ActivityThreadIdType type;
  ASSERT_CUPTI_OK(cuptiGetThreadIdType(&type));
  EXPECT_EQ(type, CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT);
  cupti_test::StartCollecting();
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
  int device = 0;
  ASSERT_CUDA_OK(cudaGetDevice(&device));
  ASSERT_CUPTI_OK(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM));
  ASSERT_CUDA_OK(cudaGetDevice(&device));
  ASSERT_CUPTI_OK(cuptiActivityFlushAll(0));
  auto api = cupti_test::RuntimeRecords(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020);
  ASSERT_EQ(api.size(), 2u);
  EXPECT_EQ(api[0].threadId, static_cast<uint32_t>(pthread_self()));
  EXPECT_EQ(api[1].threadId, static_cast<uint32_t>(gettid()));
  EXPECT_EQ(api[0].processId, static_cast<uint32_t>(getpid()));
  cuptiFinalize();
}

}  // namespace
