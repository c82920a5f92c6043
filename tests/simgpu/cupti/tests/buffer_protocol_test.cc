// The activity buffer protocol: who asks for buffers, when they come back, how records are laid
// out in them, and how losses are counted.
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "activity_collector.h"
#include "simgpu.h"

namespace {

using cupti_test::CompletedBuffers;
using cupti_test::RuntimeRecords;

class BufferProtocolTest : public ::testing::Test {
 protected:
  void TearDown() override { cuptiFinalize(); }
};

// n cheap runtime calls, each one RUNTIME record.
void MakeApiCalls(int n) {
  int device = -1;
  for (int i = 0; i < n; ++i) ASSERT_CUDA_OK(cudaGetDevice(&device));
}

bool WaitFor(const std::function<bool()>& condition) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

TEST_F(BufferProtocolTest, BuffersComeBackOnlyWhenFlushedAndHoldExactlyTheRecords) {
  cupti_test::StartCollecting({/*buffer_size=*/1 << 20});
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
  MakeApiCalls(10);
  EXPECT_GE(cupti_test::BuffersRequested(), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_TRUE(CompletedBuffers().empty()) << "a buffer that is not full stays with CUPTI";

  ASSERT_CUPTI_OK(cuptiActivityFlushAll(0));
  auto done = CompletedBuffers();  // FlushAll returns after delivery
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].size, size_t{1} << 20);
  EXPECT_GT(done[0].valid_size, 0u);
  EXPECT_EQ(done[0].end_status, CUPTI_ERROR_MAX_LIMIT_REACHED);
  EXPECT_FALSE(done[0].on_caller_thread) << "delivered on CUPTI's worker thread";
  auto gets = RuntimeRecords(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020);
  EXPECT_EQ(gets.size(), 10u);
  // Every record is a 40-byte CUpti_ActivityAPI, packed: validSize is exactly their sum.
  EXPECT_EQ(done[0].records, cupti_test::Records().size());
  EXPECT_EQ(done[0].valid_size, done[0].records * sizeof(CUpti_ActivityAPI));

  ASSERT_CUPTI_OK(cuptiActivityFlushAll(0));
  EXPECT_EQ(CompletedBuffers().size(), 1u) << "nothing new, nothing handed back";
}

TEST_F(BufferProtocolTest, FullBuffersComeBackWithoutFlush) {
  const size_t kPerBuffer = 4;
  cupti_test::StartCollecting({/*buffer_size=*/kPerBuffer * sizeof(CUpti_ActivityAPI)});
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
  MakeApiCalls(13);  // 13 records: 3 full buffers, the 4th holds one
  ASSERT_TRUE(WaitFor([] { return CompletedBuffers().size() >= 3; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto done = CompletedBuffers();
  ASSERT_EQ(done.size(), 3u);
  for (const auto& b : done) {
    EXPECT_EQ(b.records, kPerBuffer);
    EXPECT_EQ(b.valid_size, kPerBuffer * sizeof(CUpti_ActivityAPI));
  }
  EXPECT_EQ(cupti_test::BuffersRequested(), 4u);
  size_t dropped = 99;
  ASSERT_CUPTI_OK(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped));
  EXPECT_EQ(dropped, 0u);
}

TEST_F(BufferProtocolTest, MaxNumRecordsLimitsEachBuffer) {
  cupti_test::CollectorOptions options;
  options.max_records = 3;
  cupti_test::StartCollecting(options);
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
  MakeApiCalls(7);
  ASSERT_CUPTI_OK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  auto done = CompletedBuffers();
  ASSERT_EQ(done.size(), 3u);
  EXPECT_EQ(done[0].records, 3u);
  EXPECT_EQ(done[1].records, 3u);
  EXPECT_EQ(done[2].records, 1u) << "forced flush hands back the partially filled buffer";
}

TEST_F(BufferProtocolTest, TinyBuffersDropAndCountTheRecordsThatDoNotFit) {
  // Room for one API record (40 bytes) but never for a kernel record (216 bytes).
  cupti_test::StartCollecting({/*buffer_size=*/64});
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  const int kKernels = 5;
  const void* kernel = simgpuKernel("cupti_tiny_buffer_kernel", 1000);
  for (int i = 0; i < kKernels; ++i) {
    ASSERT_CUDA_OK(cudaLaunchKernel(kernel, dim3(1), dim3(1), nullptr, 0, nullptr));
  }
  ASSERT_CUDA_OK(cudaDeviceSynchronize());
  ASSERT_CUPTI_OK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  size_t dropped = 0;
  ASSERT_CUPTI_OK(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped));
  EXPECT_EQ(dropped, static_cast<size_t>(kKernels));
  EXPECT_TRUE(cupti_test::RecordsOfKind<CUpti_ActivityKernel10>(
                  CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).empty());
  EXPECT_EQ(RuntimeRecords(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000).size(),
            static_cast<size_t>(kKernels))
      << "the API records that fit were kept";
  ASSERT_CUPTI_OK(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped));
  EXPECT_EQ(dropped, 0u) << "the count resets when read";
}

TEST_F(BufferProtocolTest, DeclinedBuffersDropEveryRecord) {
  cupti_test::CollectorOptions options;
  options.decline = true;
  cupti_test::StartCollecting(options);
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
  MakeApiCalls(6);
  ASSERT_CUPTI_OK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  size_t dropped = 0;
  ASSERT_CUPTI_OK(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped));
  EXPECT_EQ(dropped, 6u);
  EXPECT_GE(cupti_test::BuffersRequested(), 6u) << "CUPTI asks again for each record";
  EXPECT_TRUE(CompletedBuffers().empty());
}

TEST_F(BufferProtocolTest, FlushPeriodHandsBackFullBuffersOnTheTick) {
  ASSERT_CUPTI_OK(cuptiActivityFlushPeriod(300));
  cupti_test::StartCollecting({/*buffer_size=*/2 * sizeof(CUpti_ActivityAPI)});
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
  MakeApiCalls(3);  // one full buffer, one partial
  ASSERT_TRUE(WaitFor([] { return !CompletedBuffers().empty(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  auto done = CompletedBuffers();
  ASSERT_EQ(done.size(), 1u) << "periodic flush returns full buffers only";
  EXPECT_EQ(done[0].records, 2u);
  ASSERT_CUPTI_OK(cuptiActivityFlushAll(0));
  EXPECT_EQ(CompletedBuffers().size(), 2u);
}

TEST_F(BufferProtocolTest, ConcurrentProducersAndFlushesLoseNothing) {
  // Small buffers, several application threads, the device thread and flushes all at once.
  cupti_test::StartCollecting({/*buffer_size=*/7 * sizeof(CUpti_ActivityAPI)});
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  const int kThreads = 4, kCallsPerThread = 200;
  const void* kernel = simgpuKernel("cupti_concurrent_kernel", 2000);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      cudaStream_t stream = nullptr;
      ASSERT_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      for (int i = 0; i < kCallsPerThread; ++i) {
        ASSERT_CUDA_OK(cudaLaunchKernel(kernel, dim3(1), dim3(1), nullptr, 0, stream));
        if (i % 50 == 0) ASSERT_CUPTI_OK(cuptiActivityFlushAll(0));
      }
      ASSERT_CUDA_OK(cudaStreamSynchronize(stream));
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_CUDA_OK(cudaDeviceSynchronize());
  ASSERT_CUPTI_OK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  size_t dropped = 0;
  ASSERT_CUPTI_OK(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped));
  EXPECT_EQ(dropped, 0u);
  const size_t kLaunches = kThreads * kCallsPerThread;
  auto launches = RuntimeRecords(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  auto kernels = cupti_test::RecordsOfKind<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(launches.size(), kLaunches);
  ASSERT_EQ(kernels.size(), kLaunches);
  std::set<uint32_t> launch_ids, kernel_ids;
  for (const auto& l : launches) launch_ids.insert(l.correlationId);
  for (const auto& k : kernels) kernel_ids.insert(k.correlationId);
  EXPECT_EQ(launch_ids.size(), kLaunches) << "one correlation id per call";
  EXPECT_EQ(kernel_ids, launch_ids) << "every kernel joins its launch";
  size_t total_records = 0;
  for (const auto& b : CompletedBuffers()) total_records += b.records;
  EXPECT_EQ(total_records, cupti_test::Records().size());
}

TEST_F(BufferProtocolTest, OverheadRecordsChargeBufferRequestsToTheRequestingThread) {
  cupti_test::StartCollecting({/*buffer_size=*/3 * sizeof(CUpti_ActivityAPI)});
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_OVERHEAD));
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
  ASSERT_CUPTI_OK(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM));
  MakeApiCalls(10);
  ASSERT_CUPTI_OK(cuptiActivityFlushAll(0));
  auto overheads = cupti_test::RecordsOfKind<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD);
  ASSERT_FALSE(overheads.empty());
  // Each request is reported once, unless it was made to store an overhead record itself.
  EXPECT_LE(overheads.size(), cupti_test::BuffersRequested());
  for (const auto& o : overheads) {
    EXPECT_EQ(o.overheadKind, CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST);
    EXPECT_EQ(o.objectKind, CUPTI_ACTIVITY_OBJECT_THREAD);
    EXPECT_EQ(o.objectId.pt.processId, static_cast<uint32_t>(getpid()));
    EXPECT_EQ(o.objectId.pt.threadId, static_cast<uint32_t>(gettid()));
    EXPECT_LE(o.start, o.end);
    EXPECT_NE(o.start, 0u);
  }
  EXPECT_EQ(RuntimeRecords(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020).size(), 10u)
      << "overhead records do not push API records out";
  size_t dropped = 1;
  ASSERT_CUPTI_OK(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped));
  EXPECT_EQ(dropped, 0u);
}

TEST_F(BufferProtocolTest, FlushWithoutCallbacksIsAnInvalidOperation) {
  EXPECT_EQ(cuptiActivityFlushAll(0), CUPTI_ERROR_INVALID_OPERATION);
  EXPECT_EQ(cuptiActivityRegisterCallbacks(nullptr, nullptr), CUPTI_ERROR_INVALID_PARAMETER);
}

TEST(RecordIterationTest, GetNextRecordStopsAtTheEndAndOnUnknownKinds) {
  alignas(8) uint8_t buffer[2 * sizeof(CUpti_ActivityAPI)] = {};
  CUpti_Activity* record = nullptr;
  EXPECT_EQ(cuptiActivityGetNextRecord(buffer, 0, &record), CUPTI_ERROR_MAX_LIMIT_REACHED);
  EXPECT_EQ(cuptiActivityGetNextRecord(buffer, sizeof(buffer), &record), CUPTI_ERROR_INVALID_KIND)
      << "kind 0 is CUPTI_ACTIVITY_KIND_INVALID";
  reinterpret_cast<CUpti_ActivityAPI*>(buffer)->kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  ASSERT_CUPTI_OK(cuptiActivityGetNextRecord(buffer, sizeof(CUpti_ActivityAPI), &record));
  EXPECT_EQ(reinterpret_cast<uint8_t*>(record), buffer);
  EXPECT_EQ(cuptiActivityGetNextRecord(buffer, sizeof(CUpti_ActivityAPI), &record),
            CUPTI_ERROR_MAX_LIMIT_REACHED);
  record = nullptr;
  EXPECT_EQ(cuptiActivityGetNextRecord(buffer, sizeof(CUpti_ActivityAPI) - 8, &record),
            CUPTI_ERROR_INVALID_KIND)
      << "a truncated record is incomplete";
}

}  // namespace
