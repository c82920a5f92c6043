// Activity records on simgpu: the right struct per kind, correlation ids that join with the
// callback API and the runtime API records, memory kinds, and nothing for disabled kinds.
#include <cuda_runtime_api.h>
#include <cupti.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <mutex>
#include <vector>

#include <gtest/gtest.h>

#include "activity_collector.h"
#include "simgpu.h"
#include "tests/fake_nvcc.h"

namespace {

using cupti_test::RecordsOfKind;
using cupti_test::RuntimeRecords;

// The correlation id of each runtime call, as the callback API reported it, by cbid.
std::mutex g_mu;
std::multimap<CUpti_CallbackId, uint32_t> g_callback_ids;

void CUPTIAPI RecordCorrelation(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                const void* cbdata) {
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API) return;
  const auto* d = static_cast<const CUpti_CallbackData*>(cbdata);
  if (d->callbackSite != CUPTI_API_EXIT) return;
  std::lock_guard<std::mutex> lock(g_mu);
  g_callback_ids.emplace(cbid, d->correlationId);
}

std::vector<uint32_t> CallbackIds(CUpti_CallbackId cbid) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::vector<uint32_t> ids;
  auto range = g_callback_ids.equal_range(cbid);
  for (auto it = range.first; it != range.second; ++it) ids.push_back(it->second);
  return ids;
}

// cuptiGetStreamId needs simgpuDriverStreamId (tool_hooks.h), which a driver may not define;
// then the check falls back to what the records themselves must satisfy.
void ExpectStreamIdOf(cudaStream_t stream, uint32_t record_stream_id) {
  uint32_t stream_id = 0;
  CUptiResult r = cuptiGetStreamId(nullptr, reinterpret_cast<CUstream>(stream), &stream_id);
  if (r == CUPTI_ERROR_NOT_SUPPORTED) return;
  ASSERT_EQ(r, CUPTI_SUCCESS);
  EXPECT_EQ(record_stream_id, stream_id);
}

class ActivityRecordsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cupti_test::StartCollecting();
    ASSERT_CUPTI_OK(cuptiSubscribe(&subscriber_, RecordCorrelation, nullptr));
    ASSERT_CUPTI_OK(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API));
    ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
  }
  void TearDown() override { cuptiFinalize(); }
  static void Flush() {
    ASSERT_CUDA_OK(cudaDeviceSynchronize());
    ASSERT_CUPTI_OK(cuptiActivityFlushAll(0));
  }
  CUpti_SubscriberHandle subscriber_ = nullptr;
};

TEST_F(ActivityRecordsTest, KernelRecordJoinsCallbackAndApiRecordAndLastsItsDuration) {
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  cudaStream_t stream = nullptr;
  ASSERT_CUDA_OK(cudaStreamCreate(&stream));
  const uint64_t kDurationNs = 20 * 1000 * 1000;
  const void* kernel = simgpuKernel("cupti_test_kernel", kDurationNs);
  uint64_t before = cupti_test::RealtimeNs();
  ASSERT_CUDA_OK(cudaLaunchKernel(kernel, dim3(4, 2, 1), dim3(128, 1, 1), nullptr, 0, stream));
  ASSERT_CUDA_OK(cudaStreamSynchronize(stream));
  uint64_t after = cupti_test::RealtimeNs();
  Flush();

  auto kernels = RecordsOfKind<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(kernels.size(), 1u);
  const CUpti_ActivityKernel10& k = kernels[0];
  EXPECT_STREQ(k.name, "cupti_test_kernel");
  EXPECT_EQ(k.gridX, 4);
  EXPECT_EQ(k.gridY, 2);
  EXPECT_EQ(k.gridZ, 1);
  EXPECT_EQ(k.blockX, 128);
  EXPECT_EQ(k.blockY, 1);
  EXPECT_EQ(k.blockZ, 1);
  // Default clock: CLOCK_REALTIME, and the kernel ran inside the host's launch..sync window.
  const uint64_t kSlack = 1000000;  // offset-pair mapping error: microseconds, even under load
  EXPECT_GE(k.start + kSlack, before);
  EXPECT_LE(k.end, after + kSlack);
  EXPECT_GE(k.end - k.start, kDurationNs - 1000);
  EXPECT_LT(k.end - k.start, kDurationNs + 5000000);
  EXPECT_EQ(k.completed, k.end);
  ExpectStreamIdOf(stream, k.streamId);

  auto launches = RuntimeRecords(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(k.correlationId, launches[0].correlationId);
  EXPECT_EQ(CallbackIds(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000),
            std::vector<uint32_t>{k.correlationId});
  EXPECT_LE(launches[0].start, k.start) << "launched before it ran";
  EXPECT_EQ(launches[0].returnValue, static_cast<uint32_t>(cudaSuccess));
  ASSERT_CUDA_OK(cudaStreamDestroy(stream));
}

TEST_F(ActivityRecordsTest, KernelRecordAppearsOnlyOnceTheKernelHasCompleted) {
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  const void* kernel = simgpuKernel("cupti_slow_kernel", 300 * 1000 * 1000);
  ASSERT_CUDA_OK(cudaLaunchKernel(kernel, dim3(1), dim3(1), nullptr, 0, nullptr));
  ASSERT_CUPTI_OK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));  // still running
  EXPECT_TRUE(RecordsOfKind<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).empty());
  EXPECT_EQ(RuntimeRecords(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000).size(), 1u)
      << "the launch call itself is over and recorded";
  Flush();
  EXPECT_EQ(RecordsOfKind<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).size(), 1u);
}

// What a kernel asks of an SM, as real CUPTI reports it (cupti_activity.h's
// CUpti_ActivityKernel10): registers per thread and static shared memory from the kernel's cubin
// (here declared with simgpuKernelResources, simgpu's stand-in for a cubin), the launch's
// dynamic shared memory, the carveout it ran with (an H100's whole 228 KiB per SM), and whether
// the kernel opted in above 48 KiB.
TEST_F(ActivityRecordsTest, KernelRecordReportsRegistersAndSharedMemory) {
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  const void* declared = simgpuKernel("cupti_declared_resources", 1000);
  ASSERT_EQ(simgpuKernelResources(declared, 72, 4096), 0);
  const void* undeclared = simgpuKernel("cupti_default_resources", 1000);
  const void* opted_in = simgpuKernel("cupti_opted_in", 1000);
  ASSERT_EQ(simgpuKernelResources(opted_in, 128, 16384), 0);
  ASSERT_CUDA_OK(cudaFuncSetAttribute(opted_in, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      100 << 10));
  ASSERT_CUDA_OK(cudaLaunchKernel(declared, dim3(8), dim3(256), nullptr, 8192, nullptr));
  ASSERT_CUDA_OK(cudaLaunchKernel(undeclared, dim3(8), dim3(256), nullptr, 0, nullptr));
  ASSERT_CUDA_OK(cudaLaunchKernel(opted_in, dim3(8), dim3(128), nullptr, 96 << 10, nullptr));
  Flush();

  auto kernels = RecordsOfKind<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(kernels.size(), 3u);
  std::map<std::string, CUpti_ActivityKernel10> by_name;
  for (const auto& k : kernels) by_name[k.name] = k;
  const CUpti_ActivityKernel10& d = by_name["cupti_declared_resources"];
  EXPECT_EQ(d.registersPerThread, 72);
  EXPECT_EQ(d.staticSharedMemory, 4096);
  EXPECT_EQ(d.dynamicSharedMemory, 8192) << "the launch's sharedMem argument";
  EXPECT_EQ(d.sharedMemoryExecuted, 228u << 10);
  EXPECT_EQ(d.shmemLimitConfig, CUPTI_FUNC_SHMEM_LIMIT_DEFAULT);
  EXPECT_EQ(d.localMemoryPerThread, 0u);
  const CUpti_ActivityKernel10& u = by_name["cupti_default_resources"];
  EXPECT_EQ(u.registersPerThread, 32) << "simgpu's documented default without a cubin";
  EXPECT_EQ(u.staticSharedMemory, 0);
  EXPECT_EQ(u.dynamicSharedMemory, 0);
  EXPECT_EQ(u.shmemLimitConfig, CUPTI_FUNC_SHMEM_LIMIT_DEFAULT);
  const CUpti_ActivityKernel10& o = by_name["cupti_opted_in"];
  EXPECT_EQ(o.registersPerThread, 128);
  EXPECT_EQ(o.staticSharedMemory, 16384);
  EXPECT_EQ(o.dynamicSharedMemory, 96 << 10);
  EXPECT_EQ(o.shmemLimitConfig, CUPTI_FUNC_SHMEM_LIMIT_OPTIN);
}

// A kernel registered the way nvcc's host code does it, with a fatbinary simgpu cannot read
// (tests/fake_nvcc.h's dummy): the defaults, until simgpuKernelResources declares its cubin's.
void FakeRegisteredStub() {}

TEST_F(ActivityRecordsTest, RegisteredKernelWithoutACubinTakesTheDeclaredResources) {
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  const void* stub = reinterpret_cast<const void*>(&FakeRegisteredStub);
  simgpu_test::RegisterKernel(stub, "_Z18FakeRegisteredStubv");
  cudaFuncAttributes attributes{};
  ASSERT_CUDA_OK(cudaFuncGetAttributes(&attributes, stub));
  EXPECT_EQ(attributes.numRegs, 32);
  EXPECT_EQ(attributes.sharedSizeBytes, 0u);
  ASSERT_CUDA_OK(cudaLaunchKernel(stub, dim3(1), dim3(32), nullptr, 0, nullptr));
  ASSERT_EQ(simgpuKernelResources(stub, 40, 2048), 0);
  ASSERT_CUDA_OK(cudaFuncGetAttributes(&attributes, stub));
  EXPECT_EQ(attributes.numRegs, 40);
  EXPECT_EQ(attributes.sharedSizeBytes, 2048u);
  EXPECT_EQ(attributes.maxDynamicSharedSizeBytes, (48 << 10) - 2048) << "48 KiB less its own";
  ASSERT_CUDA_OK(simgpu_test::TripleChevron(stub, dim3(1), dim3(32), nullptr));
  Flush();
  auto kernels = RecordsOfKind<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].registersPerThread, 32) << "launched before the declaration";
  EXPECT_EQ(kernels[0].staticSharedMemory, 0);
  EXPECT_EQ(kernels[1].registersPerThread, 40);
  EXPECT_EQ(kernels[1].staticSharedMemory, 2048);
  EXPECT_EQ(simgpuKernelResources(stub, 0, 0), -1) << "no kernel has 0 registers";
  EXPECT_EQ(simgpuKernelResources(stub, 256, 0), -1);
  EXPECT_EQ(simgpuKernelResources(stub, 32, (48 << 10) + 1), -1) << "static is at most 48 KiB";
  EXPECT_EQ(simgpuKernelResources(&kernels, 32, 0), -1) << "not a kernel";
}

TEST_F(ActivityRecordsTest, KernelsOnDifferentStreamsCarryDifferentStreamIds) {
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_STREAM));
  cudaStream_t a = nullptr, b = nullptr;
  ASSERT_CUDA_OK(cudaStreamCreate(&a));
  ASSERT_CUDA_OK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  const void* ka = simgpuKernel("cupti_on_a", 1000);
  const void* kb = simgpuKernel("cupti_on_b", 1000);
  for (int i = 0; i < 2; ++i) {
    ASSERT_CUDA_OK(cudaLaunchKernel(ka, dim3(1), dim3(1), nullptr, 0, a));
    ASSERT_CUDA_OK(cudaLaunchKernel(kb, dim3(1), dim3(1), nullptr, 0, b));
  }
  Flush();
  auto kernels = RecordsOfKind<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(kernels.size(), 4u);
  std::map<std::string, std::set<uint32_t>> streams_by_name;
  for (const auto& k : kernels) streams_by_name[k.name].insert(k.streamId);
  ASSERT_EQ(streams_by_name["cupti_on_a"].size(), 1u);
  ASSERT_EQ(streams_by_name["cupti_on_b"].size(), 1u);
  uint32_t id_a = *streams_by_name["cupti_on_a"].begin();
  uint32_t id_b = *streams_by_name["cupti_on_b"].begin();
  EXPECT_NE(id_a, id_b);
  ExpectStreamIdOf(a, id_a);
  ExpectStreamIdOf(b, id_b);
  // STREAM records announce both streams, joined to their creating calls.
  auto created = RecordsOfKind<CUpti_ActivityStream>(CUPTI_ACTIVITY_KIND_STREAM);
  ASSERT_EQ(created.size(), 2u);
  EXPECT_EQ(created[0].streamId, id_a);
  EXPECT_EQ(created[0].flag, CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT);
  EXPECT_EQ(created[0].correlationId,
            RuntimeRecords(CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreate_v3020).at(0).correlationId);
  EXPECT_EQ(created[1].streamId, id_b);
  EXPECT_EQ(created[1].flag, CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING);
  EXPECT_EQ(created[1].correlationId,
            RuntimeRecords(CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithFlags_v5000).at(0).correlationId);
  EXPECT_EQ(created[0].contextId, kernels[0].contextId);
  ASSERT_CUDA_OK(cudaStreamDestroy(a));
  ASSERT_CUDA_OK(cudaStreamDestroy(b));
}

TEST_F(ActivityRecordsTest, MemcpyRecordsTellPageableFromPinnedAndSyncFromAsync) {
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
  const size_t kBytes = 1 << 20;
  void* device = nullptr;
  ASSERT_CUDA_OK(cudaMalloc(&device, kBytes));
  void* pageable = std::malloc(kBytes);
  void* pinned = nullptr;
  ASSERT_CUDA_OK(cudaMallocHost(&pinned, kBytes));
  cudaStream_t stream = nullptr;
  ASSERT_CUDA_OK(cudaStreamCreate(&stream));
  ASSERT_CUDA_OK(cudaMemcpy(device, pageable, kBytes, cudaMemcpyHostToDevice));
  ASSERT_CUDA_OK(cudaMemcpyAsync(device, pinned, kBytes / 2, cudaMemcpyHostToDevice, stream));
  ASSERT_CUDA_OK(cudaMemcpyAsync(pinned, device, kBytes / 4, cudaMemcpyDeviceToHost, stream));
  Flush();

  auto copies = RecordsOfKind<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  ASSERT_EQ(copies.size(), 3u);
  auto sync_ids = RuntimeRecords(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020);
  auto async_ids = RuntimeRecords(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020);
  ASSERT_EQ(sync_ids.size(), 1u);
  ASSERT_EQ(async_ids.size(), 2u);
  int seen = 0;
  for (const auto& c : copies) {
    EXPECT_LE(c.start, c.end);
    EXPECT_NE(c.start, 0u);
    EXPECT_EQ(c.runtimeCorrelationId, c.correlationId);
    if (c.correlationId == sync_ids[0].correlationId) {
      ++seen;
      EXPECT_EQ(c.copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
      EXPECT_EQ(c.srcKind, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
      EXPECT_EQ(c.dstKind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
      EXPECT_EQ(c.bytes, kBytes);
      EXPECT_EQ(c.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC, 0);
    } else if (c.correlationId == async_ids[0].correlationId) {
      ++seen;
      EXPECT_EQ(c.copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
      EXPECT_EQ(c.srcKind, CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
      EXPECT_EQ(c.dstKind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
      EXPECT_EQ(c.bytes, kBytes / 2);
      EXPECT_NE(c.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC, 0);
    } else if (c.correlationId == async_ids[1].correlationId) {
      ++seen;
      EXPECT_EQ(c.copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);
      EXPECT_EQ(c.srcKind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
      EXPECT_EQ(c.dstKind, CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
      EXPECT_EQ(c.bytes, kBytes / 4);
    }
  }
  EXPECT_EQ(seen, 3) << "every copy carries its API call's correlation id";
  ASSERT_CUDA_OK(cudaStreamDestroy(stream));
  ASSERT_CUDA_OK(cudaFreeHost(pinned));
  ASSERT_CUDA_OK(cudaFree(device));
  std::free(pageable);
}

TEST(PeerCopyTest, PeerCopiesAreMemcpy2RecordsOnly) {
  // Two simulated devices; simgpu reads its configuration at the first CUDA call.
  ASSERT_EQ(setenv("SIMGPU_DEVICES", "2", 1), 0);
  cupti_test::StartCollecting();
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY2));
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
  int count = 0;
  ASSERT_CUDA_OK(cudaGetDeviceCount(&count));
  ASSERT_EQ(count, 2);
  void* on0 = nullptr;
  void* on1 = nullptr;
  ASSERT_CUDA_OK(cudaSetDevice(0));
  ASSERT_CUDA_OK(cudaMalloc(&on0, 1 << 16));
  ASSERT_CUDA_OK(cudaMemset(on0, 0, 1 << 16));  // device 0 shows its context in a record
  ASSERT_CUDA_OK(cudaSetDevice(1));
  ASSERT_CUDA_OK(cudaMalloc(&on1, 1 << 16));
  ASSERT_CUDA_OK(cudaMemset(on1, 0, 1 << 16));
  ASSERT_CUDA_OK(cudaMemcpyPeer(on1, 1, on0, 0, 1 << 16));
  ASSERT_CUDA_OK(cudaDeviceSynchronize());
  ASSERT_CUPTI_OK(cuptiActivityFlushAll(0));
  EXPECT_TRUE(RecordsOfKind<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY).empty());
  auto peer = RecordsOfKind<CUpti_ActivityMemcpyPtoP4>(CUPTI_ACTIVITY_KIND_MEMCPY2);
  ASSERT_EQ(peer.size(), 1u);
  EXPECT_EQ(peer[0].copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP);
  EXPECT_EQ(peer[0].bytes, 1u << 16);
  EXPECT_EQ(peer[0].correlationId,
            RuntimeRecords(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeer_v4000).at(0).correlationId);
  EXPECT_NE(peer[0].srcContextId, CUPTI_INVALID_CONTEXT_ID);
  EXPECT_NE(peer[0].dstContextId, CUPTI_INVALID_CONTEXT_ID);
  cuptiFinalize();
}

TEST_F(ActivityRecordsTest, MemsetRecord) {
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET));
  void* device = nullptr;
  ASSERT_CUDA_OK(cudaMalloc(&device, 65536));
  ASSERT_CUDA_OK(cudaMemset(device, 0x5a, 65536));
  Flush();
  auto sets = RecordsOfKind<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(sets[0].value, 0x5au);
  EXPECT_EQ(sets[0].bytes, 65536u);
  EXPECT_EQ(sets[0].memoryKind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  auto api = RuntimeRecords(CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020);
  ASSERT_EQ(api.size(), 1u);
  EXPECT_EQ(sets[0].correlationId, api[0].correlationId);
  ASSERT_CUDA_OK(cudaFree(device));
}

TEST_F(ActivityRecordsTest, SynchronizationRecordsPerSyncKind) {
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION));
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  cudaStream_t stream = nullptr;
  ASSERT_CUDA_OK(cudaStreamCreate(&stream));
  cudaEvent_t event = nullptr;
  ASSERT_CUDA_OK(cudaEventCreate(&event));
  const void* kernel = simgpuKernel("cupti_sync_kernel", 5 * 1000 * 1000);
  ASSERT_CUDA_OK(cudaLaunchKernel(kernel, dim3(1), dim3(1), nullptr, 0, stream));
  ASSERT_CUDA_OK(cudaStreamSynchronize(stream));
  ASSERT_CUDA_OK(cudaLaunchKernel(kernel, dim3(1), dim3(1), nullptr, 0, stream));
  ASSERT_CUDA_OK(cudaEventRecord(event, stream));
  ASSERT_CUDA_OK(cudaEventSynchronize(event));
  ASSERT_CUDA_OK(cudaDeviceSynchronize());
  ASSERT_CUPTI_OK(cuptiActivityFlushAll(0));

  auto syncs = RecordsOfKind<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  std::map<CUpti_ActivitySynchronizationType, CUpti_ActivitySynchronization2> by_type;
  for (const auto& s : syncs) by_type[s.type] = s;
  ASSERT_TRUE(by_type.count(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE));
  ASSERT_TRUE(by_type.count(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE));
  ASSERT_TRUE(by_type.count(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE));
  const auto& ss = by_type[CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE];
  ExpectStreamIdOf(stream, ss.streamId);
  EXPECT_NE(ss.streamId, CUPTI_SYNCHRONIZATION_INVALID_VALUE);
  EXPECT_EQ(ss.correlationId,
            RuntimeRecords(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020).at(0).correlationId);
  // The host waited for the first kernel: the wait spans that kernel's end.
  auto kernels = RecordsOfKind<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(kernels.size(), 2u);
  uint64_t first_end = std::min(kernels[0].end, kernels[1].end);
  EXPECT_LE(ss.start, first_end);
  EXPECT_GE(ss.end, first_end);
  EXPECT_EQ(ss.streamId, kernels[0].streamId);
  const auto& es = by_type[CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE];
  EXPECT_NE(es.cudaEventId, CUPTI_SYNCHRONIZATION_INVALID_VALUE);
  EXPECT_EQ(es.correlationId,
            RuntimeRecords(CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020).at(0).correlationId);
  const auto& cs = by_type[CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE];
  EXPECT_EQ(cs.correlationId,
            RuntimeRecords(CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020).at(0).correlationId);
  ASSERT_CUDA_OK(cudaEventDestroy(event));
  ASSERT_CUDA_OK(cudaStreamDestroy(stream));
}

TEST_F(ActivityRecordsTest, Memory2RecordsAllocationAndRelease) {
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY2));
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY));
  void* device = nullptr;
  ASSERT_CUDA_OK(cudaMalloc(&device, 3 << 20));
  ASSERT_CUDA_OK(cudaFree(device));
  Flush();
  auto mem = RecordsOfKind<CUpti_ActivityMemory4>(CUPTI_ACTIVITY_KIND_MEMORY2);
  auto mallocs = RuntimeRecords(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020);
  auto frees = RuntimeRecords(CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020);
  ASSERT_EQ(mallocs.size(), 1u);
  ASSERT_EQ(frees.size(), 1u);
  ASSERT_EQ(mem.size(), 2u);
  const auto& alloc = mem[0];
  const auto& release = mem[1];
  EXPECT_EQ(alloc.memoryOperationType, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION);
  EXPECT_EQ(release.memoryOperationType, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE);
  for (const auto* m : {&alloc, &release}) {
    EXPECT_EQ(m->address, reinterpret_cast<uint64_t>(device));
    EXPECT_EQ(m->bytes, 3u << 20);
    EXPECT_EQ(m->memoryKind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
    EXPECT_EQ(m->streamId, CUPTI_INVALID_STREAM_ID) << "not stream-ordered";
  }
  EXPECT_EQ(alloc.correlationId, mallocs[0].correlationId);
  EXPECT_EQ(release.correlationId, frees[0].correlationId);
  EXPECT_LE(alloc.timestamp, release.timestamp);
  // The legacy MEMORY kind: one record spanning allocation to release.
  auto legacy = RecordsOfKind<CUpti_ActivityMemory>(CUPTI_ACTIVITY_KIND_MEMORY);
  ASSERT_EQ(legacy.size(), 1u);
  EXPECT_EQ(legacy[0].address, reinterpret_cast<uint64_t>(device));
  EXPECT_EQ(legacy[0].start, alloc.timestamp);
  EXPECT_EQ(legacy[0].end, release.timestamp);
}

TEST_F(ActivityRecordsTest, DisabledKindsProduceNothing) {
  ASSERT_CUPTI_OK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME));
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
  void* device = nullptr;
  ASSERT_CUDA_OK(cudaMalloc(&device, 4096));
  std::vector<char> host(4096);
  ASSERT_CUDA_OK(cudaMemset(device, 1, 4096));
  ASSERT_CUDA_OK(cudaLaunchKernel(simgpuKernel("cupti_ignored", 1000), dim3(1), dim3(1), nullptr, 0,
                                  nullptr));
  ASSERT_CUDA_OK(cudaMemcpy(host.data(), device, 4096, cudaMemcpyDeviceToHost));
  ASSERT_CUPTI_OK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY));
  ASSERT_CUDA_OK(cudaMemcpy(host.data(), device, 4096, cudaMemcpyDeviceToHost));
  Flush();
  auto records = cupti_test::Records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(reinterpret_cast<const CUpti_Activity*>(records[0].data())->kind,
            CUPTI_ACTIVITY_KIND_MEMCPY);
  ASSERT_CUDA_OK(cudaFree(device));
}

TEST_F(ActivityRecordsTest, PerCbidRuntimeRecordsWithoutTheWholeKind) {
  ASSERT_CUPTI_OK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME));
  ASSERT_CUPTI_OK(cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, 1));
  void* device = nullptr;
  ASSERT_CUDA_OK(cudaMalloc(&device, 4096));
  ASSERT_CUDA_OK(cudaFree(device));
  Flush();
  auto api = RecordsOfKind<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  ASSERT_EQ(api.size(), 1u);
  EXPECT_EQ(api[0].cbid, static_cast<CUpti_CallbackId>(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020));
  EXPECT_EQ(CallbackIds(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020),
            std::vector<uint32_t>{api[0].correlationId});
}

TEST_F(ActivityRecordsTest, ExternalCorrelationPrecedesApiRecordsInTheRegion) {
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
  void* device = nullptr;
  ASSERT_CUPTI_OK(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, 42));
  ASSERT_CUDA_OK(cudaMalloc(&device, 4096));
  uint64_t last = 0;
  ASSERT_CUPTI_OK(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last));
  EXPECT_EQ(last, 42u);
  EXPECT_EQ(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last),
            CUPTI_ERROR_QUEUE_EMPTY);
  ASSERT_CUDA_OK(cudaFree(device));
  Flush();
  auto records = cupti_test::Records();
  auto ext = RecordsOfKind<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  ASSERT_EQ(ext.size(), 1u) << "only the call inside the region";
  EXPECT_EQ(ext[0].externalKind, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2);
  EXPECT_EQ(ext[0].externalId, 42u);
  auto mallocs = RuntimeRecords(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020);
  ASSERT_EQ(mallocs.size(), 1u);
  EXPECT_EQ(ext[0].correlationId, mallocs[0].correlationId);
}

TEST(ActivityKindsTest, LegacyProfilerKindsAreRefusedAsIn13) {
  EXPECT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EVENT), CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED);
  EXPECT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_PC_SAMPLING),
            CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED);
  EXPECT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_INVALID), CUPTI_ERROR_INVALID_KIND);
  EXPECT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_COUNT), CUPTI_ERROR_INVALID_KIND);
  for (CUpti_ActivityKind accepted :
       {CUPTI_ACTIVITY_KIND_KERNEL, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_OVERHEAD,
        CUPTI_ACTIVITY_KIND_NAME, CUPTI_ACTIVITY_KIND_MARKER}) {
    EXPECT_EQ(cuptiActivityEnable(accepted), CUPTI_SUCCESS) << accepted;
    EXPECT_EQ(cuptiActivityDisable(accepted), CUPTI_SUCCESS) << accepted;
  }
}

}  // namespace
