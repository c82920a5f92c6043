// semantics_test.cc — the CUDA semantics a profiler depends on, each checked on simgpu's
// libcudart.so.13 in real time. Timing bounds are generous (a shared, noisy machine): lower
// bounds are what the model guarantees, upper bounds only separate "overlapped" from "serial".
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "simgpu.h"
#include "tests/test_util.h"

using simgpu_test::MsSince;

// What --default-stream per-thread builds call (cuda_runtime_api.h declares them only then).
extern "C" cudaError_t cudaLaunchKernel_ptsz(const void* func, dim3 gridDim, dim3 blockDim,
                                             void** args, size_t sharedMem, cudaStream_t stream);
extern "C" cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream);

namespace {

constexpr double kSlackMs = 150;  // scheduling noise allowed above a modelled duration

const void* Kernel(const char* name, double ms) {
  return simgpuKernel(name, static_cast<uint64_t>(ms * 1e6));
}

cudaError_t Launch(const void* k, cudaStream_t s) {
  return cudaLaunchKernel(k, dim3(1), dim3(128), nullptr, 0, s);
}

TEST(SimgpuTimeline, KernelTakesItsDurationInRealTime) {
  ASSERT_EQ(cudaFree(nullptr), cudaSuccess);  // the usual warm-up: initialises the driver
  const void* k = Kernel("k20", 20);
  uint64_t t0 = simgpuNowNs();
  ASSERT_EQ(Launch(k, nullptr), cudaSuccess);
  double launch_ms = MsSince(t0);
  EXPECT_LT(launch_ms, 15) << "a launch must not wait for the kernel";
  EXPECT_EQ(cudaStreamQuery(nullptr), cudaErrorNotReady);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  double ms = MsSince(t0);
  EXPECT_GE(ms, 20);
  EXPECT_LT(ms, 20 + kSlackMs);
  EXPECT_EQ(cudaStreamQuery(nullptr), cudaSuccess);
}

TEST(SimgpuTimeline, StreamRunsInOrder) {
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  const void* k = Kernel("k15", 15);
  uint64_t t0 = simgpuNowNs();
  for (int i = 0; i < 3; ++i) ASSERT_EQ(Launch(k, s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  EXPECT_GE(MsSince(t0), 45);
  cudaStreamDestroy(s);
}

TEST(SimgpuTimeline, StreamsRunConcurrently) {
  const void* k = Kernel("k100", 100);
  std::vector<cudaStream_t> streams(3);
  for (auto& s : streams) ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  uint64_t t0 = simgpuNowNs();
  for (auto s : streams) ASSERT_EQ(Launch(k, s), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  double ms = MsSince(t0);
  EXPECT_GE(ms, 100);
  EXPECT_LT(ms, 250) << "three 100 ms kernels on three streams must overlap";
  for (auto s : streams) cudaStreamDestroy(s);
}

TEST(SimgpuEvents, ElapsedTimeQueryAndSynchronize) {
  cudaStream_t s;
  cudaEvent_t a, b;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&a), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&b), cudaSuccess);
  ASSERT_EQ(Launch(Kernel("blocker", 50), s), cudaSuccess);  // see DefaultAndExactDurations
  ASSERT_EQ(cudaEventRecord(a, s), cudaSuccess);
  ASSERT_EQ(Launch(Kernel("k25", 25), s), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(b, s), cudaSuccess);
  EXPECT_EQ(cudaEventQuery(b), cudaErrorNotReady);
  float ms = 0;
  EXPECT_EQ(cudaEventElapsedTime(&ms, a, b), cudaErrorNotReady);
  uint64_t t0 = simgpuNowNs();
  ASSERT_EQ(cudaEventSynchronize(b), cudaSuccess);
  EXPECT_GE(MsSince(t0), 25);
  EXPECT_EQ(cudaEventQuery(b), cudaSuccess);
  ASSERT_EQ(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
  EXPECT_NEAR(ms, 25.0, 0.001) << "device timestamps follow the model";
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaStreamDestroy(s);
}

// ctest runs this with SIMGPU_COMPLETION_BATCH_NS=60s: the device thread may report a kernel's
// or an event's end a minute late while no host thread waits (timeline.cc, "Lazy completions"),
// so a query or a sync that saw only reported ends would answer a minute late. None does.
TEST(SimgpuLazyCompletions, QueriesAndSyncsSeeEveryEndOnTime) {
  cudaStream_t s;
  cudaEvent_t a, b;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&a), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&b), cudaSuccess);
  ASSERT_EQ(Launch(Kernel("blocker", 20), s), cudaSuccess);  // a and k10 then start back to back
  ASSERT_EQ(cudaEventRecord(a, s), cudaSuccess);
  ASSERT_EQ(Launch(Kernel("k10", 10), s), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(b, s), cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(s), cudaErrorNotReady);
  std::this_thread::sleep_for(std::chrono::milliseconds(80));  // past the end, far inside the batch
  EXPECT_EQ(cudaStreamQuery(s), cudaSuccess);
  EXPECT_EQ(cudaEventQuery(b), cudaSuccess);
  float ms = 0;
  ASSERT_EQ(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
  EXPECT_NEAR(ms, 10.0, 0.001);
  // A sync returns at the end, not a batch later.
  uint64_t t0 = simgpuNowNs();
  ASSERT_EQ(Launch(Kernel("k20", 20), s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  EXPECT_GE(MsSince(t0), 20);
  EXPECT_LT(MsSince(t0), 20 + kSlackMs);
  t0 = simgpuNowNs();
  ASSERT_EQ(Launch(Kernel("k20", 20), s), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(b, s), cudaSuccess);
  ASSERT_EQ(cudaEventSynchronize(b), cudaSuccess);
  ASSERT_EQ(Launch(Kernel("k20", 20), nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_GE(MsSince(t0), 40);
  EXPECT_LT(MsSince(t0), 40 + kSlackMs);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaStreamDestroy(s);
}

TEST(SimgpuEvents, StreamWaitEventOrdersAcrossStreams) {
  cudaStream_t producer, consumer;
  cudaEvent_t done;
  ASSERT_EQ(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), cudaSuccess);
  uint64_t t0 = simgpuNowNs();
  ASSERT_EQ(Launch(Kernel("k40", 40), producer), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(done, producer), cudaSuccess);
  ASSERT_EQ(cudaStreamWaitEvent(consumer, done, 0), cudaSuccess);
  ASSERT_EQ(Launch(Kernel("k10", 10), consumer), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(consumer), cudaSuccess);
  EXPECT_GE(MsSince(t0), 50) << "consumer's kernel must start after the producer's event";
  float ms;
  EXPECT_EQ(cudaEventElapsedTime(&ms, done, done), cudaErrorInvalidResourceHandle)
      << "events created with cudaEventDisableTiming have no timestamps";
}

TEST(SimgpuCopies, TakeBytesOverBandwidthAndPageableIsSlower) {
  ASSERT_EQ(simgpuSetCopyBandwidth(cudaMemcpyHostToDevice, 1, 10e9), 0);
  ASSERT_EQ(simgpuSetCopyBandwidth(cudaMemcpyHostToDevice, 0, 0.03e9), 0);
  const size_t n = 1 << 20;  // small: moving the real bytes must not dominate (sanitizer builds)
  const double pageable_model_ms = n / 0.03e9 * 1e3;  // 35 ms
  const double pinned_model_ms = n / 10e9 * 1e3;      // 0.1 ms
  void* dev;
  void* pinned;
  ASSERT_EQ(cudaMalloc(&dev, n), cudaSuccess);
  ASSERT_EQ(cudaMallocHost(&pinned, n), cudaSuccess);
  std::vector<char> pageable(n, 1);
  uint64_t t0 = simgpuNowNs();
  ASSERT_EQ(cudaMemcpy(dev, pageable.data(), n, cudaMemcpyHostToDevice), cudaSuccess);
  double pageable_ms = MsSince(t0);
  t0 = simgpuNowNs();
  ASSERT_EQ(cudaMemcpy(dev, pinned, n, cudaMemcpyHostToDevice), cudaSuccess);
  double pinned_ms = MsSince(t0);
  EXPECT_GE(pageable_ms, pageable_model_ms);
  EXPECT_GE(pinned_ms, pinned_model_ms);
  EXPECT_LT(pinned_ms, pageable_ms);
  EXPECT_LT(pinned_ms, pinned_model_ms + kSlackMs);
  cudaFree(dev);
  cudaFreeHost(pinned);
}

TEST(SimgpuCopies, MemcpyBlocksTheHostUntilPriorWorkAndTheCopyAreDone) {
  void* dev;
  ASSERT_EQ(cudaMalloc(&dev, 64), cudaSuccess);
  char host[64];
  uint64_t t0 = simgpuNowNs();
  ASSERT_EQ(Launch(Kernel("k30", 30), nullptr), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(host, dev, sizeof host, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_GE(MsSince(t0), 30);
  EXPECT_EQ(cudaStreamQuery(nullptr), cudaSuccess) << "the kernel before the copy has completed";
  cudaFree(dev);
}

TEST(SimgpuCopies, PageableAsyncBlocksWhilePinnedAsyncReturns) {
  ASSERT_EQ(simgpuSetCopyBandwidth(cudaMemcpyHostToDevice, 0, 1e9), 0);
  ASSERT_EQ(simgpuSetCopyBandwidth(cudaMemcpyHostToDevice, 1, 0.25e9), 0);
  const size_t n = 32 << 20;  // pageable: 33.5 ms at 1 GB/s; pinned: 134 ms at 0.25 GB/s
  void* dev;
  void* pinned;
  cudaStream_t s;
  ASSERT_EQ(cudaMalloc(&dev, n), cudaSuccess);
  ASSERT_EQ(cudaHostAlloc(&pinned, n, cudaHostAllocDefault), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  std::vector<char> pageable(n, 2);
  uint64_t t0 = simgpuNowNs();
  ASSERT_EQ(cudaMemcpyAsync(dev, pageable.data(), n, cudaMemcpyHostToDevice, s), cudaSuccess);
  EXPECT_GE(MsSince(t0), 33) << "pageable H2D staging holds the host";
  t0 = simgpuNowNs();
  ASSERT_EQ(cudaMemcpyAsync(dev, pinned, n, cudaMemcpyHostToDevice, s), cudaSuccess);
  EXPECT_LT(MsSince(t0), 20) << "a pinned async copy returns at once";
  EXPECT_EQ(cudaStreamQuery(s), cudaErrorNotReady);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  t0 = simgpuNowNs();
  ASSERT_EQ(cudaMemcpyAsync(pageable.data(), dev, n, cudaMemcpyDeviceToHost, s), cudaSuccess);
  EXPECT_GE(MsSince(t0), n / 6e9 * 1e3) << "pageable D2H async is fully synchronous";
  cudaFree(dev);
  cudaFreeHost(pinned);
  cudaStreamDestroy(s);
}

TEST(SimgpuCopies, MoveRealBytes) {
  const size_t n = 1 << 20;
  std::vector<unsigned char> src(n), back(n, 0);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<unsigned char>(i * 7 + 3);
  void *a, *b;
  ASSERT_EQ(cudaMalloc(&a, n), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&b, n), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(a, src.data(), n, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(b, a, n, cudaMemcpyDeviceToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(back.data(), b, n, cudaMemcpyDefault), cudaSuccess);
  EXPECT_EQ(0, std::memcmp(src.data(), back.data(), n));
  ASSERT_EQ(cudaMemset(b, 0xab, 100), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(back.data(), b, 101, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back[99], 0xab);
  EXPECT_EQ(back[100], src[100]);
  // 2-D: 4 rows of 8 bytes out of a 16-byte pitch.
  std::vector<unsigned char> rows(64, 0);
  ASSERT_EQ(cudaMemcpy2D(rows.data(), 16, a, 8, 8, 4, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(rows[16], src[8]);
  EXPECT_EQ(rows[8], 0);
  EXPECT_EQ(cudaMemcpy(back.data(), a, n + 1, cudaMemcpyDeviceToHost), cudaErrorInvalidValue)
      << "a copy past the end of an allocation";
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  cudaFree(a);
  cudaFree(b);
}

TEST(SimgpuDefaultStream, LegacyStreamWaitsForBlockingStreamsButNotNonBlocking) {
  cudaStream_t blocking, nonblocking;
  ASSERT_EQ(cudaStreamCreate(&blocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking), cudaSuccess);
  // Blocking stream's work delays the legacy stream.
  uint64_t t0 = simgpuNowNs();
  ASSERT_EQ(Launch(Kernel("k60", 60), blocking), cudaSuccess);
  ASSERT_EQ(Launch(Kernel("k10", 10), nullptr), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(cudaStreamLegacy), cudaSuccess);
  EXPECT_GE(MsSince(t0), 70);
  // And the legacy stream's work delays a blocking stream.
  t0 = simgpuNowNs();
  ASSERT_EQ(Launch(Kernel("k60", 60), nullptr), cudaSuccess);
  ASSERT_EQ(Launch(Kernel("k10", 10), blocking), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(blocking), cudaSuccess);
  EXPECT_GE(MsSince(t0), 70);
  // A non-blocking stream is exempt both ways.
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  t0 = simgpuNowNs();
  ASSERT_EQ(Launch(Kernel("k200", 200), nonblocking), cudaSuccess);
  ASSERT_EQ(Launch(Kernel("k10", 10), nullptr), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
  EXPECT_LT(MsSince(t0), 150);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudaStreamDestroy(blocking);
  cudaStreamDestroy(nonblocking);
}

TEST(SimgpuDefaultStream, PerThreadDefaultStreamsAreIndependentStreams) {
  const void* k = Kernel("k100", 100);
  uint64_t t0 = simgpuNowNs();
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([k] {
      EXPECT_EQ(cudaLaunchKernel_ptsz(k, dim3(1), dim3(32), nullptr, 0, nullptr), cudaSuccess);
      EXPECT_EQ(cudaStreamSynchronize_ptsz(nullptr), cudaSuccess);
    });
  }
  for (auto& t : threads) t.join();
  double ms = MsSince(t0);
  EXPECT_GE(ms, 100);
  EXPECT_LT(ms, 250) << "each thread's default stream is its own stream";
  // ...which is a blocking stream: the legacy stream waits for it.
  t0 = simgpuNowNs();
  ASSERT_EQ(cudaLaunchKernel_ptsz(Kernel("k50", 50), dim3(1), dim3(32), nullptr, 0, nullptr),
            cudaSuccess);
  ASSERT_EQ(Launch(Kernel("k10", 10), cudaStreamLegacy), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(cudaStreamLegacy), cudaSuccess);
  EXPECT_GE(MsSince(t0), 60);
}

TEST(SimgpuImplicitSync, FreeAndFreeHostWaitForTheDevice) {
  void *dev, *pinned;
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dev, 256), cudaSuccess);
  ASSERT_EQ(cudaMallocHost(&pinned, 256), cudaSuccess);
  uint64_t t0 = simgpuNowNs();
  ASSERT_EQ(Launch(Kernel("k40", 40), s), cudaSuccess);
  ASSERT_EQ(cudaFree(dev), cudaSuccess);
  EXPECT_GE(MsSince(t0), 40) << "cudaFree waits for work on the device";
  EXPECT_EQ(cudaStreamQuery(s), cudaSuccess);
  t0 = simgpuNowNs();
  ASSERT_EQ(Launch(Kernel("k40", 40), s), cudaSuccess);
  ASSERT_EQ(cudaFreeHost(pinned), cudaSuccess);
  EXPECT_GE(MsSince(t0), 40) << "cudaFreeHost waits for work on every device";
  EXPECT_EQ(cudaStreamQuery(s), cudaSuccess);
  t0 = simgpuNowNs();
  ASSERT_EQ(Launch(Kernel("k40", 40), s), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dev, 256), cudaSuccess);
  EXPECT_LT(MsSince(t0), 30) << "cudaMalloc does not wait for the device";
  ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
  EXPECT_LT(MsSince(t0), 30) << "cudaFree(NULL) does not synchronise";
  cudaFree(dev);
  cudaStreamDestroy(s);
}

TEST(SimgpuMemory, CapacityAndNonStickyAllocationFailure) {
  ASSERT_EQ(simgpuSetMemoryCapacity(64 << 20), 0);
  size_t free_bytes, total;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
  EXPECT_EQ(total, size_t{64} << 20);
  void *a, *b = nullptr, *c;
  ASSERT_EQ(cudaMalloc(&a, 48 << 20), cudaSuccess);
  EXPECT_EQ(simgpuSetMemoryCapacity(16 << 20), -1) << "below what is allocated";
  EXPECT_EQ(cudaMalloc(&b, 32 << 20), cudaErrorMemoryAllocation);
  EXPECT_EQ(b, nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "not sticky: reading it clears it";
  ASSERT_EQ(cudaMalloc(&c, 8 << 20), cudaSuccess) << "later allocations still work";
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
  EXPECT_EQ(free_bytes, size_t{8} << 20);
  ASSERT_EQ(cudaFree(a), cudaSuccess);
  ASSERT_EQ(cudaFree(c), cudaSuccess);
  EXPECT_EQ(cudaFree(a), cudaErrorInvalidValue) << "double free";
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
  EXPECT_EQ(free_bytes, total);
}

TEST(SimgpuMemory, PointerAttributesAndAsyncAllocation) {
  void *dev, *pinned, *managed;
  std::vector<char> pageable(64);
  ASSERT_EQ(cudaMalloc(&dev, 64), cudaSuccess);
  ASSERT_EQ(cudaMallocHost(&pinned, 64), cudaSuccess);
  ASSERT_EQ(cudaMallocManaged(&managed, 64, cudaMemAttachGlobal), cudaSuccess);
  cudaPointerAttributes attr;
  ASSERT_EQ(cudaPointerGetAttributes(&attr, static_cast<char*>(dev) + 10), cudaSuccess);
  EXPECT_EQ(attr.type, cudaMemoryTypeDevice);
  ASSERT_EQ(cudaPointerGetAttributes(&attr, pinned), cudaSuccess);
  EXPECT_EQ(attr.type, cudaMemoryTypeHost);
  ASSERT_EQ(cudaPointerGetAttributes(&attr, managed), cudaSuccess);
  EXPECT_EQ(attr.type, cudaMemoryTypeManaged);
  ASSERT_EQ(cudaPointerGetAttributes(&attr, pageable.data()), cudaSuccess);
  EXPECT_EQ(attr.type, cudaMemoryTypeUnregistered);
  ASSERT_EQ(cudaHostRegister(pageable.data(), pageable.size(), 0), cudaSuccess);
  ASSERT_EQ(cudaPointerGetAttributes(&attr, pageable.data()), cudaSuccess);
  EXPECT_EQ(attr.type, cudaMemoryTypeHost);
  ASSERT_EQ(cudaHostUnregister(pageable.data()), cudaSuccess);
  EXPECT_EQ(cudaHostUnregister(pageable.data()), cudaErrorHostMemoryNotRegistered);
  cudaGetLastError();

  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  void* async_mem;
  ASSERT_EQ(cudaMallocAsync(&async_mem, 1 << 20, s), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(async_mem, 0, 1 << 20, s), cudaSuccess);
  ASSERT_EQ(cudaFreeAsync(async_mem, s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  ASSERT_EQ(cudaPointerGetAttributes(&attr, async_mem), cudaSuccess);
  EXPECT_EQ(attr.type, cudaMemoryTypeUnregistered) << "freed once the stream got there";
  // The default pool: tunable, and it allocates like cudaMallocAsync.
  cudaMemPool_t pool;
  ASSERT_EQ(cudaDeviceGetDefaultMemPool(&pool, 0), cudaSuccess);
  uint64_t threshold = UINT64_MAX, read_back = 0;
  ASSERT_EQ(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold), cudaSuccess);
  ASSERT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &read_back), cudaSuccess);
  EXPECT_EQ(read_back, threshold);
  void* from_pool;
  ASSERT_EQ(cudaMallocFromPoolAsync(&from_pool, 4096, pool, s), cudaSuccess);
  ASSERT_EQ(cudaPointerGetAttributes(&attr, from_pool), cudaSuccess);
  EXPECT_EQ(attr.type, cudaMemoryTypeDevice);
  ASSERT_EQ(cudaFreeAsync(from_pool, s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  cudaFree(dev);
  cudaFreeHost(pinned);
  cudaFree(managed);
  cudaStreamDestroy(s);
}

TEST(SimgpuErrors, InvalidLaunchConfigurationIsReturnedAndNotSticky) {
  const void* k = Kernel("k1", 1);
  EXPECT_EQ(cudaLaunchKernel(k, dim3(1), dim3(2048), nullptr, 0, nullptr),
            cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaPeekAtLastError(), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaLaunchKernel(reinterpret_cast<const void*>(&Launch), dim3(1), dim3(1), nullptr, 0,
                             nullptr),
            cudaErrorInvalidDeviceFunction);
  cudaGetLastError();
  EXPECT_EQ(Launch(k, nullptr), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_STREQ(cudaGetErrorName(cudaErrorInvalidConfiguration), "cudaErrorInvalidConfiguration");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory");
}

// Run with SIMGPU_FAULT_KERNEL=faulty (ctest sets it).
TEST(SimgpuErrors, FaultingKernelMakesEveryLaterCallFailSticky) {
  void* dev;
  ASSERT_EQ(cudaMalloc(&dev, 64), cudaSuccess);
  ASSERT_EQ(Launch(Kernel("faulty", 5), nullptr), cudaSuccess) << "launch itself succeeds";
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  EXPECT_EQ(cudaGetLastError(), cudaErrorIllegalAddress);
  EXPECT_EQ(cudaGetLastError(), cudaErrorIllegalAddress) << "sticky: reading does not clear it";
  void* more;
  EXPECT_EQ(cudaMalloc(&more, 64), cudaErrorIllegalAddress);
  EXPECT_EQ(Launch(Kernel("fine", 1), nullptr), cudaErrorIllegalAddress);
  char host[8];
  EXPECT_EQ(cudaMemcpy(host, dev, 8, cudaMemcpyDeviceToHost), cudaErrorIllegalAddress);
  EXPECT_EQ(cudaStreamSynchronize(nullptr), cudaErrorIllegalAddress);
}

TEST(SimgpuKernelModel, DefaultAndExactDurations) {
  // simgpuKernel: exact. Registered kernels: SIMGPU_KERNEL_NS (ctest sets 30ms for this test).
  cudaEvent_t a, b;
  ASSERT_EQ(cudaEventCreate(&a), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&b), cudaSuccess);
  // Behind a blocker, the event and the kernel start when the stream gets free, independent of
  // how fast the host submitted them: the elapsed time is the kernel's modelled duration.
  ASSERT_EQ(Launch(Kernel("blocker", 50), nullptr), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(a, nullptr), cudaSuccess);
  ASSERT_EQ(Launch(Kernel("exact", 7.5), nullptr), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(b, nullptr), cudaSuccess);
  ASSERT_EQ(cudaEventSynchronize(b), cudaSuccess);
  float ms;
  ASSERT_EQ(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
  EXPECT_NEAR(ms, 7.5, 0.001);
  EXPECT_EQ(simgpuKernel("exact", 7500000), Kernel("exact", 7.5)) << "same (name, ns), same handle";
}

}  // namespace

namespace {

// Run with SIMGPU_LAUNCH_HOST_NS=100us (ctest sets it).
TEST(SimgpuLaunch, HostCostIsPaidInsideEachLaunch) {
  ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  const void* k = simgpuKernel("tiny", 1000);
  uint64_t t0 = simgpuNowNs();
  for (int i = 0; i < 200; ++i) ASSERT_EQ(Launch(k, s), cudaSuccess);
  EXPECT_GE(MsSince(t0), 20) << "200 launches x 100 us of host time";
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  cudaStreamDestroy(s);
}

// Run with SIMGPU_DEVICES=2 (ctest sets it).
TEST(SimgpuDevices, DevicesHaveTheirOwnMemoryStreamsAndTimelines) {
  int n = 0;
  ASSERT_EQ(cudaGetDeviceCount(&n), cudaSuccess);
  ASSERT_EQ(n, 2);
  EXPECT_EQ(cudaSetDevice(2), cudaErrorInvalidDevice);
  cudaGetLastError();
  void *on0, *on1;
  ASSERT_EQ(cudaMalloc(&on0, 1 << 20), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&on1, 1 << 20), cudaSuccess);
  cudaPointerAttributes attr;
  ASSERT_EQ(cudaPointerGetAttributes(&attr, on1), cudaSuccess);
  EXPECT_EQ(attr.device, 1);
  size_t free1, total;
  ASSERT_EQ(cudaMemGetInfo(&free1, &total), cudaSuccess);
  EXPECT_EQ(total - free1, size_t{1} << 20) << "device 1 counts only its own allocation";
  // Peer copy moves the bytes.
  std::vector<char> pattern(1 << 20, 9), back(1 << 20, 0);
  ASSERT_EQ(cudaMemcpy(on0, pattern.data(), pattern.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpyPeer(on1, 1, on0, 0, pattern.size()), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(back.data(), on1, back.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, pattern);
  // Device 0's long kernel does not hold device 1's synchronisation.
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(Launch(Kernel("k300", 300), nullptr), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  uint64_t t0 = simgpuNowNs();
  ASSERT_EQ(Launch(Kernel("k10", 10), nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_LT(MsSince(t0), 200);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST(SimgpuLaunch, ExtendedAndCooperativeLaunchesRunLikeAnyOther) {
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(2);
  config.blockDim = dim3(64);
  config.stream = s;
  uint64_t t0 = simgpuNowNs();
  ASSERT_EQ(cudaLaunchKernelExC(&config, Kernel("k20", 20), nullptr), cudaSuccess);
  ASSERT_EQ(cudaLaunchCooperativeKernel(Kernel("k20", 20), dim3(1), dim3(32), nullptr, 0, s),
            cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  EXPECT_GE(MsSince(t0), 40);
  config.blockDim = dim3(0);
  EXPECT_EQ(cudaLaunchKernelExC(&config, Kernel("k20", 20), nullptr), cudaErrorInvalidConfiguration);
  cudaGetLastError();
  cudaStreamDestroy(s);
}

// As cuda.h documents CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: a launch asking more
// dynamic shared memory than the kernel's limit fails (cudaErrorInvalidValue); the limit is
// 48 KiB less the kernel's static shared memory until cudaFuncAttributeMaxDynamicSharedMemorySize
// raises it, at most to 227 KiB less it (cudaDevAttrMaxSharedMemoryPerBlockOptin, an H100's).
TEST(SimgpuLaunch, SharedMemoryAboveTheKernelsLimitIsInvalidUntilItOptsIn) {
  const void* k = Kernel("k_shared", 1);
  ASSERT_EQ(simgpuKernelResources(k, 64, 8 << 10), 0);  // 8 KiB of its own
  cudaFuncAttributes a{};
  ASSERT_EQ(cudaFuncGetAttributes(&a, k), cudaSuccess);
  EXPECT_EQ(a.maxDynamicSharedSizeBytes, 40 << 10);
  EXPECT_EQ(cudaLaunchKernel(k, dim3(1), dim3(128), nullptr, 40 << 10, nullptr), cudaSuccess);
  EXPECT_EQ(cudaLaunchKernel(k, dim3(1), dim3(128), nullptr, (40 << 10) + 1, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "not sticky";
  EXPECT_EQ(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (219 << 10) + 1),
            cudaErrorInvalidValue) << "8 KiB + more than 219 KiB is past 227 KiB";
  cudaGetLastError();
  ASSERT_EQ(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 219 << 10),
            cudaSuccess);
  ASSERT_EQ(cudaFuncGetAttributes(&a, k), cudaSuccess);
  EXPECT_EQ(a.maxDynamicSharedSizeBytes, 219 << 10);
  EXPECT_EQ(cudaLaunchKernel(k, dim3(1), dim3(128), nullptr, 219 << 10, nullptr), cudaSuccess);
  EXPECT_EQ(cudaLaunchKernel(k, dim3(1), dim3(128), nullptr, (219 << 10) + 1, nullptr),
            cudaErrorInvalidValue);
  cudaGetLastError();
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  // The device's side of it (Programming Guide, compute capability 9.0).
  int value = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0),
            cudaSuccess);
  EXPECT_EQ(value, 232448);
  ASSERT_EQ(cudaDeviceGetAttribute(&value, cudaDevAttrReservedSharedMemoryPerBlock, 0),
            cudaSuccess);
  EXPECT_EQ(value, 1024);
  ASSERT_EQ(cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0),
            cudaSuccess);
  EXPECT_EQ(value, 233472);
  cudaDeviceProp p{};
  ASSERT_EQ(cudaGetDeviceProperties(&p, 0), cudaSuccess);
  EXPECT_EQ(p.reservedSharedMemPerBlock, 1024u);
  EXPECT_EQ(p.sharedMemPerBlock, 49152u);
}

TEST(SimgpuLaunch, HostFunctionsRunWhenTheStreamReachesThem) {
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  struct Seen {
    std::atomic<uint64_t> at{0};
    std::atomic<int> callbacks{0};
  } seen;
  uint64_t t0 = simgpuNowNs();
  ASSERT_EQ(Launch(Kernel("k30", 30), s), cudaSuccess);
  ASSERT_EQ(cudaLaunchHostFunc(
                s, [](void* p) { static_cast<Seen*>(p)->at = simgpuNowNs(); }, &seen),
            cudaSuccess);
  ASSERT_EQ(cudaStreamAddCallback(
                s, [](cudaStream_t, cudaError_t status, void* p) {
                  if (status == cudaSuccess) ++static_cast<Seen*>(p)->callbacks;
                }, &seen, 0),
            cudaSuccess);
  EXPECT_EQ(seen.at.load(), 0u) << "not before the kernel ahead of it completes";
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  EXPECT_GE(seen.at.load(), t0 + 30 * 1000000ull);
  EXPECT_EQ(seen.callbacks.load(), 1);
  cudaStreamDestroy(s);
}

TEST(SimgpuProcess, ChildForkedAfterInitialisationCannotUseCuda) {
  ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
  pid_t pid = fork();
  if (pid == 0) {
    void* p;
    _exit(cudaMalloc(&p, 16) == cudaErrorInitializationError ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  void* p;
  EXPECT_EQ(cudaMalloc(&p, 16), cudaSuccess) << "the parent is unaffected";
}

}  // namespace
