// The CUDA 12 flavour of simgpu's CUPTI (libcupti.so.12, release.h) playing CUDA 12.6 (ctest sets
// SIMGPU_CUPTI_API_VERSION=24): cuptiGetVersion says so, records are laid out at 12.6's sizes
// (Kernel9 208 bytes, Memcpy5 88, Synchronization 40), and the bytes 13.0 made isDeviceLaunched
// are 12.6's padding, filled with 0xA5.
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
  ASSERT_EQ(cudaLaunchKernel(simgpuKernel("release_test_kernel", 1000), dim3{1, 1, 1}, dim3{1, 1, 1}, nullptr, 0, stream),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(device, host.data(), host.size(), cudaMemcpyHostToDevice, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);

  std::map<CUpti_ActivityKind, size_t> sizes;  // kind → distance to the next record
  bool memcpy_padding_filled = false;
  std::lock_guard<std::mutex> lock(g_mu);
  for (std::vector<uint8_t>& buffer : g_buffers) {
    CUpti_Activity* record = nullptr;
    CUpti_Activity* previous = nullptr;
    while (cuptiActivityGetNextRecord(buffer.data(), buffer.size(), &record) == CUPTI_SUCCESS) {
      if (previous != nullptr) {
        sizes[previous->kind] = static_cast<size_t>(reinterpret_cast<uint8_t*>(record) -
                                                    reinterpret_cast<uint8_t*>(previous));
      }
      if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
        const uint8_t* pad = reinterpret_cast<uint8_t*>(record) + offsetof(CUpti_ActivityMemcpy5, pad2);
        memcpy_padding_filled = pad[0] == 0xA5 && pad[1] == 0xA5 && pad[2] == 0xA5 && pad[3] == 0xA5;
      }
      previous = record;
    }
  }
  // Records of the three kinds, each followed by another: the kernel, then the copy, then the sync.
  ASSERT_EQ(sizes.count(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), 1u);
  ASSERT_EQ(sizes.count(CUPTI_ACTIVITY_KIND_MEMCPY), 1u);
  EXPECT_EQ(sizes[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL], sizeof(CUpti_ActivityKernel9));
  EXPECT_EQ(sizes[CUPTI_ACTIVITY_KIND_MEMCPY], sizeof(CUpti_ActivityMemcpy5));
  EXPECT_TRUE(memcpy_padding_filled);
  cuptiFinalize();
}

TEST(ReleaseTest, TheCuda12LibraryLacksThirteenOnlyExports) {
  // Linked against libcupti.so.12: 13.0's cuptiSubscribe_v2 must not be found in it.
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "cuptiSubscribe_v2"), nullptr);
  EXPECT_NE(dlvsym(RTLD_DEFAULT, "cuptiSubscribe", "libcupti.so.12"), nullptr);
}

}  // namespace
