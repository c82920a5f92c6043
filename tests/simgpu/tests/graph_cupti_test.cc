// graph_cupti_test.cc — simgpu's stream capture and graph replay (driver/graphs.cc), seen by a
// CUPTI tool as NVIDIA documents them: launches into a capturing stream run nothing; a synchronous
// call on a capturing stream fails and invalidates the capture; capture is refused on the legacy
// stream; each replay runs every captured kernel in capture order, one after the other, and every
// kernel record of one replay carries that cudaGraphLaunch's correlation id, the graph's id and a
// node id (the same nodes' ids in every replay of one executable graph). A subscriber to CUPTI's
// resource domain sees each captured kernel become a node inside its launch call
// (GRAPHNODE_CREATED) and cudaGraphInstantiate copy each node (GRAPHNODE_CREATED, then
// GRAPHNODE_CLONED with the original), and the replayed kernels, memsets and copies carry the
// copies' ids: the
// mapping NVIDIA's cuda_graphs_trace sample follows (CUPTI_CORRELATION.md fact 10).
#include <cuda_runtime_api.h>
#include <cupti.h>

#include <map>
#include <mutex>
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
  for (size_t i = 0; i < 3; ++i) {  // each with its own dynamic shared memory, which nodes keep
    ASSERT_CUDA_OK(cudaLaunchKernel(kernels[i], dim3(1), dim3(32), nullptr, 256 * (i + 1), stream));
  }
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
      EXPECT_EQ(k.dynamicSharedMemory, 256 * (node + 1));
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

// What a graph-aware tool records: the runtime call each node event happened in.
struct NodeEvent {
  CUpti_CallbackId cbid;
  uint64_t node_id, original_node_id;
  CUpti_CallbackId inside_cbid;  // the runtime call it happened in
  uint32_t inside_correlation;
  CUgraphNodeType type;
};
std::mutex g_mu;
std::vector<NodeEvent> g_events;
thread_local CUpti_CallbackId t_call_cbid = 0;
thread_local uint32_t t_call_correlation = 0;
std::map<uint32_t, uint32_t> g_launch_correlation_by_order;  // n-th cudaLaunchKernel -> its correlation
int g_launches = 0;

void CUPTIAPI NodeCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* cbdata) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    const auto* d = static_cast<const CUpti_CallbackData*>(cbdata);
    if (d->callbackSite == CUPTI_API_ENTER) {
      t_call_cbid = cbid;
      t_call_correlation = d->correlationId;
      if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) {
        std::lock_guard<std::mutex> lock(g_mu);
        g_launch_correlation_by_order[g_launches++] = d->correlationId;
      }
    }
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_RESOURCE) return;
  const auto* graph = static_cast<const CUpti_GraphData*>(static_cast<const CUpti_ResourceData*>(cbdata)->resourceDescriptor);
  NodeEvent e{cbid, 0, 0, t_call_cbid, t_call_correlation, CU_GRAPH_NODE_TYPE_KERNEL};
  EXPECT_EQ(cuptiGetGraphNodeId(graph->node, &e.node_id), CUPTI_SUCCESS);
  if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) {
    EXPECT_EQ(cuptiGetGraphNodeId(graph->originalNode, &e.original_node_id), CUPTI_SUCCESS);
  }
  e.type = graph->nodeType;
  std::lock_guard<std::mutex> lock(g_mu);
  g_events.push_back(e);
}

TEST(SimgpuGraphs, NodesAreCreatedInsideTheirCapturingLaunchAndClonedAtInstantiation) {
  cupti_test::StartCollecting();
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  CUpti_SubscriberHandle subscriber;
  ASSERT_CUPTI_OK(cuptiSubscribe(&subscriber, NodeCallback, nullptr));
  ASSERT_CUPTI_OK(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API));
  ASSERT_CUPTI_OK(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED));
  ASSERT_CUPTI_OK(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED));
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET));
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
  cudaStream_t stream;
  ASSERT_CUDA_OK(cudaStreamCreate(&stream));
  const char* names[] = {"traced_a", "traced_b", "traced_c"};
  void* a = nullptr;
  void* b = nullptr;
  ASSERT_CUDA_OK(cudaMalloc(&a, 1 << 20));
  ASSERT_CUDA_OK(cudaMalloc(&b, 1 << 20));
  ASSERT_CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (const char* n : names)
    ASSERT_CUDA_OK(cudaLaunchKernel(simgpuKernel(n, 1000), dim3(1), dim3(32), nullptr, 0, stream));
  // A memset and a device-to-device copy become nodes too (their records come at replay).
  ASSERT_CUDA_OK(cudaMemsetAsync(a, 0, 1 << 20, stream));
  ASSERT_CUDA_OK(cudaMemcpyAsync(b, a, 1 << 20, cudaMemcpyDeviceToDevice, stream));
  cudaGraph_t graph = nullptr;
  ASSERT_CUDA_OK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  ASSERT_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  ASSERT_CUDA_OK(cudaGraphLaunch(exec, stream));
  ASSERT_CUDA_OK(cudaStreamSynchronize(stream));
  ASSERT_CUPTI_OK(cuptiUnsubscribe(subscriber));
  ASSERT_CUPTI_OK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));

  std::lock_guard<std::mutex> lock(g_mu);
  ASSERT_EQ(g_events.size(), 15u);  // 5 at capture; 5 x (created, cloned) at instantiation
  ASSERT_EQ(g_launches, 3);
  std::vector<uint64_t> captured, clones;
  const CUgraphNodeType types[] = {CU_GRAPH_NODE_TYPE_KERNEL, CU_GRAPH_NODE_TYPE_KERNEL, CU_GRAPH_NODE_TYPE_KERNEL,
                                   CU_GRAPH_NODE_TYPE_MEMSET, CU_GRAPH_NODE_TYPE_MEMCPY};
  const CUpti_CallbackId makers[] = {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                     CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                     CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                     CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
                                     CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020};
  for (int i = 0; i < 5; ++i) {
    const NodeEvent& e = g_events[i];
    EXPECT_EQ(e.cbid, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED);
    EXPECT_EQ(e.inside_cbid, makers[i]) << i;
    EXPECT_EQ(e.type, types[i]) << i;
    if (i < 3) {
      EXPECT_EQ(e.inside_correlation, g_launch_correlation_by_order[i]);
    }
    captured.push_back(e.node_id);
  }
  for (int i = 0; i < 5; ++i) {
    const NodeEvent& created = g_events[5 + 2 * i];
    const NodeEvent& cloned = g_events[6 + 2 * i];
    EXPECT_EQ(created.cbid, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED);
    EXPECT_EQ(cloned.cbid, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED);
    EXPECT_EQ(created.inside_cbid, CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v12000);
    EXPECT_EQ(cloned.inside_cbid, CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v12000);
    EXPECT_EQ(cloned.node_id, created.node_id);
    EXPECT_EQ(cloned.original_node_id, captured[i]);
    EXPECT_EQ(cloned.type, types[i]);
    clones.push_back(cloned.node_id);
  }
  std::map<std::string, uint64_t> replayed;
  for (const auto& k : cupti_test::RecordsOfKind<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))
    replayed[k.name] = k.graphNodeId;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(replayed[names[i]], clones[i]) << names[i];
  // The memset and the copy ran once, at the replay, under the graph launch's correlation id.
  const auto launches = cupti_test::RuntimeRecords(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000);
  ASSERT_FALSE(launches.empty());
  const uint32_t replay = launches.back().correlationId;
  const auto memsets = cupti_test::RecordsOfKind<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
  ASSERT_EQ(memsets.size(), 1u);
  EXPECT_EQ(memsets[0].graphNodeId, clones[3]);
  EXPECT_EQ(memsets[0].correlationId, replay);
  EXPECT_EQ(memsets[0].bytes, 1u << 20);
  std::vector<CUpti_ActivityMemcpy6> copies;
  for (const auto& m : cupti_test::RecordsOfKind<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY))
    if (m.graphNodeId != 0) copies.push_back(m);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].graphNodeId, clones[4]);
  EXPECT_EQ(copies[0].correlationId, replay);
  EXPECT_EQ(copies[0].copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD);
  ASSERT_CUDA_OK(cudaFree(a));
  ASSERT_CUDA_OK(cudaFree(b));
  ASSERT_CUDA_OK(cudaStreamDestroy(stream));
}

}  // namespace
