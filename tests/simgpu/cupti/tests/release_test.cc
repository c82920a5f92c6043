// The CUDA 12 flavour of simgpu's CUPTI (libcupti.so.12, release.h) playing CUDA 12.6 (ctest sets
// SIMGPU_CUPTI_API_VERSION=24): cuptiGetVersion says so, records are laid out at 12.6's sizes
// (Kernel9 208 bytes, Memcpy5 88, Synchronization 40), the bytes 13.0 made isDeviceLaunched
// are 12.6's padding, filled with 0xA5, and Kernel9 carries the kernel's registers and shared
// memory.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <cupti.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include <gtest/gtest.h>

#include "simgpu.h"

namespace {

std::mutex g_mu;
std::vector<std::vector<uint8_t>> g_buffers;  // completed buffers' valid bytes

void CUPTIAPI Requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 1 << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}

void CUPTIAPI Completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_buffers.emplace_back(buffer, buffer + valid);
  std::free(buffer);
}

TEST(ReleaseTest, Cuda12_6HandsOutItsOwnLayouts) {
  uint32_t version = 0;
  ASSERT_EQ(cuptiGetVersion(&version), CUPTI_SUCCESS);
  ASSERT_EQ(version, 24u) << "ctest sets SIMGPU_CUPTI_API_VERSION=24";
  ASSERT_EQ(cuptiActivityRegisterCallbacks(Requested, Completed), CUPTI_SUCCESS);
  for (CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                  CUPTI_ACTIVITY_KIND_SYNCHRONIZATION}) {
    ASSERT_EQ(cuptiActivityEnable(kind), CUPTI_SUCCESS);
  }
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  void* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, 4096), cudaSuccess);
  std::vector<uint8_t> host(4096, 1);
  const void* kernel = simgpuKernel("release_test_kernel", 1000);
  ASSERT_EQ(simgpuKernelResources(kernel, 48, 1000), 0);
  ASSERT_EQ(cudaLaunchKernel(kernel, dim3{1, 1, 1}, dim3{1, 1, 1}, nullptr, 2048, stream),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(device, host.data(), host.size(), cudaMemcpyHostToDevice, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  // The same kernel once more, so that another record follows the first kernel's and the copy's in
  // whatever order they come: a kernel's end may be reported up to a millisecond late (simgpu's
  // lazy completions, driver/timeline.cc), after the copy's and the synchronization's, and CUPTI
  // promises no order between kinds. (Once in a parallel ctest the first kernel's was the last
  // record, its size unmeasured.)
  ASSERT_EQ(cudaLaunchKernel(kernel, dim3{1, 1, 1}, dim3{1, 1, 1}, nullptr, 2048, stream),
            cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);

  std::map<CUpti_ActivityKind, size_t> sizes;  // kind → distance to the next record
  bool memcpy_padding_filled = false;
  CUpti_ActivityKernel9 kernel_record{};  // 12.x's struct: the same fields at the same offsets
  std::lock_guard<std::mutex> lock(g_mu);
  for (std::vector<uint8_t>& buffer : g_buffers) {
    CUpti_Activity* record = nullptr;
    CUpti_Activity* previous = nullptr;
    while (cuptiActivityGetNextRecord(buffer.data(), buffer.size(), &record) == CUPTI_SUCCESS) {
      if (previous != nullptr) {
        sizes[previous->kind] = static_cast<size_t>(reinterpret_cast<uint8_t*>(record) -
                                                    reinterpret_cast<uint8_t*>(previous));
      }
      if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
        std::memcpy(&kernel_record, record, sizeof kernel_record);
      }
      if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
        const uint8_t* pad = reinterpret_cast<uint8_t*>(record) + offsetof(CUpti_ActivityMemcpy5, pad2);
        memcpy_padding_filled = pad[0] == 0xA5 && pad[1] == 0xA5 && pad[2] == 0xA5 && pad[3] == 0xA5;
      }
      previous = record;
    }
  }
  // Records of the kernel and the copy, each followed by another.
  ASSERT_EQ(sizes.count(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), 1u);
  ASSERT_EQ(sizes.count(CUPTI_ACTIVITY_KIND_MEMCPY), 1u);
  EXPECT_EQ(sizes[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL], sizeof(CUpti_ActivityKernel9));
  EXPECT_EQ(sizes[CUPTI_ACTIVITY_KIND_MEMCPY], sizeof(CUpti_ActivityMemcpy5));
  EXPECT_TRUE(memcpy_padding_filled);
  // The kernel's resources reach 12.x's layout too.
  EXPECT_EQ(kernel_record.registersPerThread, 48);
  EXPECT_EQ(kernel_record.staticSharedMemory, 1000);
  EXPECT_EQ(kernel_record.dynamicSharedMemory, 2048);
  EXPECT_EQ(kernel_record.sharedMemoryExecuted, 228u << 10);
  EXPECT_EQ(kernel_record.shmemLimitConfig, CUPTI_FUNC_SHMEM_LIMIT_DEFAULT);
  cuptiFinalize();
}

TEST(ReleaseTest, TheCuda12LibraryLacksThirteenOnlyExports) {
  // Linked against libcupti.so.12: 13.0's cuptiSubscribe_v2 must not be found in it.
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "cuptiSubscribe_v2"), nullptr);
  EXPECT_NE(dlvsym(RTLD_DEFAULT, "cuptiSubscribe", "libcupti.so.12"), nullptr);
}

}  // namespace
