// A flush delivers the records of all work that has completed, whether or not the host
// synchronised: NVIDIA's cuptiActivityFlushAll flushes completed records. simgpu's device thread
// may report a kernel's end late while no host thread waits (SIMGPU_COMPLETION_BATCH_NS,
// driver/timeline.cc "Lazy completions"); ctest runs this with a 60 s batch, so only the flush's
// own request (simgpuDriverReportEnded, tool_hooks.h) can bring the record in time.
#include <cuda_runtime_api.h>
#include <cupti.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "activity_collector.h"
#include "simgpu.h"

namespace {

TEST(LazyCompletionsTest, AFlushDeliversTheRecordOfAKernelThatEndedWithoutASync) {
  cupti_test::StartCollecting();
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  const void* kernel = simgpuKernel("cupti_ended_kernel", 5 * 1000 * 1000);
  ASSERT_EQ(cudaLaunchKernel(kernel, dim3(1), dim3(1), nullptr, 0, nullptr), cudaSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // ended, unsynchronised
  ASSERT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
  auto kernels = cupti_test::RecordsOfKind<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_STREQ(kernels[0].name, "cupti_ended_kernel");
  EXPECT_EQ(kernels[0].end - kernels[0].start, 5u * 1000 * 1000);
  cuptiFinalize();
}

}  // namespace
