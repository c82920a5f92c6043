// graph_cupti_test.cc — simgpu's stream capture and graph replay (driver/graphs.cc), seen by a
// CUPTI tool as NVIDIA documents them: launches into a capturing stream run nothing; a synchronous
// call on a capturing stream fails and invalidates the capture; capture is refused on the legacy
// stream; each replay runs every captured kernel in capture order, one after the other, and every
// kernel record of one replay carries that cudaGraphLaunch's correlation id, the graph's id and a
// node id (the same nodes' ids in every replay of one executable graph).
#include <cuda_runtime_api.h>
#include <cupti.h>

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "activity_collector.h"
#include "simgpu.h"

namespace {

constexpr uint64_t kNodeNs[] = {300000, 200000, 100000};

TEST(SimgpuGraphs, CaptureRunsNothingAndEachReplayRunsEveryNodeUnderItsLaunchsCorrelation) {
  cupti_test::StartCollecting();
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  cudaStream_t stream;
  ASSERT_CUDA_OK(cudaStreamCreate(&stream));
  const void* kernels[] = {simgpuKernel("node_a", kNodeNs[0]), simgpuKernel("node_b", kNodeNs[1]),
                           simgpuKernel("node_c", kNodeNs[2])};

  // Capture: the launches succeed and run nothing.
  cudaStreamCaptureStatus status;
  ASSERT_CUDA_OK(cudaStreamIsCapturing(stream, &status));
  EXPECT_EQ(status, cudaStreamCaptureStatusNone);
  ASSERT_CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  ASSERT_CUDA_OK(cudaStreamIsCapturing(stream, &status));
  EXPECT_EQ(status, cudaStreamCaptureStatusActive);
  for (const void* k : kernels) ASSERT_CUDA_OK(cudaLaunchKernel(k, dim3(1), dim3(32), nullptr, 0, stream));
  cudaGraph_t graph = nullptr;
  ASSERT_CUDA_OK(cudaStreamEndCapture(stream, &graph));
  ASSERT_NE(graph, nullptr);
  ASSERT_CUDA_OK(cudaStreamQuery(stream));  // nothing was enqueued
  cudaGraphExec_t exec = nullptr;
  ASSERT_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));

  // Two replays, then a plain launch.
  const uint64_t t0 = simgpuNowNs();
  ASSERT_CUDA_OK(cudaGraphLaunch(exec, stream));
  ASSERT_CUDA_OK(cudaGraphLaunch(exec, stream));
  ASSERT_CUDA_OK(cudaStreamSynchronize(stream));
  EXPECT_GE(simgpuNowNs() - t0, 2 * (kNodeNs[0] + kNodeNs[1] + kNodeNs[2]));
  ASSERT_CUDA_OK(cudaLaunchKernel(kernels[0], dim3(1), dim3(32), nullptr, 0, stream));
  ASSERT_CUDA_OK(cudaStreamSynchronize(stream));
  ASSERT_CUDA_OK(cudaGraphExecDestroy(exec));
  ASSERT_CUDA_OK(cudaGraphDestroy(graph));
  EXPECT_EQ(cudaGraphLaunch(exec, stream), cudaErrorInvalidValue);  // a destroyed executable
  ASSERT_CUPTI_OK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));

  auto launches = cupti_test::RuntimeRecords(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000);
  ASSERT_EQ(launches.size(), 3u);  // two good ones, one refused
  auto kernel_records = cupti_test::RecordsOfKind<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(kernel_records.size(), 7u);  // 2 x 3 replayed + 1 plain; none at capture
  for (int replay = 0; replay < 2; ++replay) {
    uint64_t previous_end = 0;
    for (int node = 0; node < 3; ++node) {
      const CUpti_ActivityKernel10& k = kernel_records[replay * 3 + node];
      EXPECT_EQ(std::string(k.name), std::string("node_") + static_cast<char>('a' + node));
      EXPECT_EQ(k.correlationId, launches[replay].correlationId);
      EXPECT_NE(k.graphId, 0u);
      EXPECT_EQ(k.graphId, kernel_records[0].graphId);
      EXPECT_NE(k.graphNodeId, 0u);
      EXPECT_EQ(k.graphNodeId, kernel_records[node].graphNodeId);  // the same node in both replays
      EXPECT_EQ(k.end - k.start, kNodeNs[node]);
      EXPECT_GE(k.start, previous_end);  // in capture order, one after the other
      previous_end = k.end;
    }
  }
  std::set<uint64_t> nodes{kernel_records[0].graphNodeId, kernel_records[1].graphNodeId,
                           kernel_records[2].graphNodeId};
  EXPECT_EQ(nodes.size(), 3u);
  EXPECT_EQ(kernel_records[6].graphId, 0u);  // an ordinary launch
  EXPECT_EQ(kernel_records[6].graphNodeId, 0u);
  ASSERT_CUDA_OK(cudaStreamDestroy(stream));
}

TEST(SimgpuGraphs, SynchronisingACapturingStreamInvalidatesTheCaptureAndTheLegacyStreamCannotCapture) {
  cudaStream_t stream;
  ASSERT_CUDA_OK(cudaStreamCreate(&stream));
  const void* k = simgpuKernel("captured", 1000);
  ASSERT_CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  EXPECT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaErrorIllegalState);
  ASSERT_CUDA_OK(cudaLaunchKernel(k, dim3(1), dim3(32), nullptr, 0, stream));
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaErrorStreamCaptureUnsupported);
  cudaStreamCaptureStatus status;
  ASSERT_CUDA_OK(cudaStreamIsCapturing(stream, &status));
  EXPECT_EQ(status, cudaStreamCaptureStatusInvalidated);
  cudaGraph_t graph = reinterpret_cast<cudaGraph_t>(0x1);
  EXPECT_EQ(cudaStreamEndCapture(stream, &graph), cudaErrorStreamCaptureInvalidated);
  EXPECT_EQ(graph, nullptr);
  EXPECT_EQ(cudaStreamEndCapture(stream, &graph), cudaErrorIllegalState);  // no capture any more
  (void)cudaGetLastError();
  EXPECT_EQ(cudaStreamBeginCapture(nullptr, cudaStreamCaptureModeGlobal), cudaErrorStreamCaptureUnsupported);
  (void)cudaGetLastError();
  ASSERT_CUDA_OK(cudaStreamSynchronize(stream));  // usable again, nothing ran
  ASSERT_CUDA_OK(cudaStreamDestroy(stream));
}

}  // namespace
