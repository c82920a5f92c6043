// cuda_api_test.cc — the table derived from cuda_api.def describes the calls correctly, and the
// CUPTI path decodes a callback's params struct into the same facts as the interposer path.
#include "agent/capture/cuda_api/cuda_api.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>

namespace gs {
namespace {

TEST(CudaApiTableTest, NamesAndCbidsAreUniqueAndRoundTrip) {
  std::set<std::string> names;
  std::set<uint32_t> cbids;
  for (size_t i = 0; i < kCudaApiCount; ++i) {
    const CudaApiInfo& info = kCudaApiInfo[i];
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    EXPECT_TRUE(cbids.insert(info.cupti_cbid).second) << info.name;
    CudaApi api;
    ASSERT_TRUE(CudaApiFromCupti(info.cupti_cbid, &api)) << info.name;
    EXPECT_EQ(static_cast<size_t>(api), i);
    EXPECT_STREQ(CudaApiName(ApiSource::kInterposer, static_cast<uint16_t>(i)), info.name);
    EXPECT_STREQ(CudaApiName(ApiSource::kCuptiCallback, static_cast<uint16_t>(info.cupti_cbid)), info.name);
  }
  EXPECT_EQ(InfoOf(CudaApi::k___cudaLaunchKernel).cupti_cbid, 505u);
  EXPECT_EQ(InfoOf(CudaApi::k___cudaLaunchKernel_ptsz).cupti_cbid, 506u);
  EXPECT_EQ(InfoOf(CudaApi::k_cudaMemcpy).cupti_cbid, 31u);
  CudaApi api;
  EXPECT_FALSE(CudaApiFromCupti(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, &api));
}

TEST(CudaApiTableTest, ClassesAndFlagsFollowTheFunction) {
  EXPECT_EQ(InfoOf(CudaApi::k_cudaMemcpyAsync_ptsz).api_class, ApiClass::kMemcpy);
  EXPECT_EQ(InfoOf(CudaApi::k_cudaMemcpyAsync_ptsz).flags, kApiFlagAsync | kApiFlagPerThreadStream);
  EXPECT_EQ(InfoOf(CudaApi::k_cudaMemcpy).flags, 0);
  EXPECT_EQ(InfoOf(CudaApi::k___cudaLaunchKernel).api_class, ApiClass::kLaunch);
  EXPECT_EQ(InfoOf(CudaApi::k_cudaHostAlloc).effect, CudaApiEffect::kAddPinned);
  EXPECT_EQ(InfoOf(CudaApi::k_cudaFreeHost).effect, CudaApiEffect::kRemoveHost);
  EXPECT_EQ(InfoOf(CudaApi::k_cudaStreamSynchronize).api_class, ApiClass::kStreamSync);
  EXPECT_FALSE(InfoOf(CudaApi::k_cudaSetDevice).recorded);
  EXPECT_TRUE(InfoOf(CudaApi::k_cudaEventQuery).recorded);
}

TEST(CudaApiTableTest, CuptiParamsGiveTheSameFactsAsArguments) {
  char host[64];
  void* dev = reinterpret_cast<void*>(0x7000'0000'1000ull);
  cudaStream_t stream = reinterpret_cast<cudaStream_t>(0x1234);
  cudaMemcpyAsync_v3020_params p{dev, host, 48, cudaMemcpyHostToDevice, stream};
  const CudaCallFacts f = CudaFactsFromCuptiParams(CudaApi::k_cudaMemcpyAsync, &p, true);
  EXPECT_EQ(f.stream, 0x1234u);
  EXPECT_EQ(f.bytes, 48u);
  EXPECT_EQ(f.copy_kind, cudaMemcpyHostToDevice);
  EXPECT_EQ(f.src, host);
  EXPECT_EQ(f.dst, dev);
  EXPECT_EQ(f.address, reinterpret_cast<uintptr_t>(dev));

  cudaMemcpy2D_v3020_params p2{dev, 256, host, 64, 16, 3, cudaMemcpyHostToDevice};
  EXPECT_EQ(CudaFactsFromCuptiParams(CudaApi::k_cudaMemcpy2D, &p2, true).bytes, 48u);
}

// Every kernel launch of the table reads its configuration (cuda_launch.def); a graph launch and
// every other call have none.
TEST(CudaApiTableTest, KernelLaunchesGiveTheirConfiguration) {
  cudaStream_t stream = reinterpret_cast<cudaStream_t>(0x1234);
  cudaLaunchKernel_v7000_params launch{nullptr, dim3(265, 2, 1), dim3(1024, 1, 1), nullptr, 4096, stream};
  KernelLaunchShape shape;
  ASSERT_TRUE(KernelLaunchShapeOf(CudaApi::k_cudaLaunchKernel, &launch, &shape));
  EXPECT_EQ(shape.grid[0], 265u);
  EXPECT_EQ(shape.grid[1], 2u);
  EXPECT_EQ(shape.grid[2], 1u);
  EXPECT_EQ(shape.block[0], 1024u);
  EXPECT_EQ(shape.dynamic_shared_bytes, 4096u);
  gs_cudaLaunchKernel_v13000_params chevron{nullptr, dim3(1, 1, 1), dim3(256, 1, 1), nullptr, 0, stream};
  ASSERT_TRUE(KernelLaunchShapeOf(CudaApi::k___cudaLaunchKernel_ptsz, &chevron, &shape));
  EXPECT_EQ(shape.grid[0], 1u);
  EXPECT_EQ(shape.block[0], 256u);
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(7, 1, 1);
  config.blockDim = dim3(64, 2, 1);
  config.dynamicSmemBytes = 512;
  cudaLaunchKernelExC_v11060_params ex{&config, nullptr, nullptr};
  ASSERT_TRUE(KernelLaunchShapeOf(CudaApi::k_cudaLaunchKernelExC, &ex, &shape));
  EXPECT_EQ(shape.grid[0], 7u);
  EXPECT_EQ(shape.block[1], 2u);
  EXPECT_EQ(shape.dynamic_shared_bytes, 512u);
  cudaLaunchKernelExC_v11060_params no_config{nullptr, nullptr, nullptr};
  EXPECT_FALSE(KernelLaunchShapeOf(CudaApi::k_cudaLaunchKernelExC, &no_config, &shape));
  // Every launch row of cuda_api.def but the graph launches (many kernels) has a line there.
  const std::set<std::string> with_shape = {
#define GS_CUDA_LAUNCH(NAME, ...) #NAME,
#include "agent/capture/cuda_api/cuda_launch.def"
#undef GS_CUDA_LAUNCH
  };
  for (size_t i = 0; i < kCudaApiCount; ++i) {
    const CudaApiInfo& info = InfoOf(static_cast<CudaApi>(i));
    const bool graph = std::string(info.name).find("Graph") != std::string::npos;
    const bool kernel_launch = info.api_class == ApiClass::kLaunch && !graph;
    EXPECT_EQ(with_shape.count(info.name) == 1, kernel_launch) << info.name;
  }
}

TEST(CudaApiTableTest, PerThreadVariantsNameThePerThreadStream) {
  cudaMemcpyAsync_ptsz_v7000_params p{nullptr, nullptr, 8, cudaMemcpyDeviceToDevice, nullptr};
  EXPECT_EQ(CudaFactsFromCuptiParams(CudaApi::k_cudaMemcpyAsync_ptsz, &p, true).stream,
            reinterpret_cast<uintptr_t>(cudaStreamPerThread));
  cudaMemcpy_ptds_v7000_params q{nullptr, nullptr, 8, cudaMemcpyDeviceToDevice};
  EXPECT_EQ(CudaFactsFromCuptiParams(CudaApi::k_cudaMemcpy_ptds, &q, true).stream,
            reinterpret_cast<uintptr_t>(cudaStreamPerThread));
  cudaMemcpy_v3020_params r{nullptr, nullptr, 8, cudaMemcpyDeviceToDevice};
  EXPECT_EQ(CudaFactsFromCuptiParams(CudaApi::k_cudaMemcpy, &r, true).stream, 0u);
}

TEST(CudaApiTableTest, AllocationAddressIsReadOnlyOnSuccess) {
  void* out = reinterpret_cast<void*>(0xabc000);
  cudaMalloc_v3020_params p{&out, 4096};
  EXPECT_EQ(CudaFactsFromCuptiParams(CudaApi::k_cudaMalloc, &p, true).address, 0xabc000u);
  EXPECT_EQ(CudaFactsFromCuptiParams(CudaApi::k_cudaMalloc, &p, false).address, 0u);
  EXPECT_EQ(CudaFactsFromCuptiParams(CudaApi::k_cudaMalloc, &p, true).bytes, 4096u);
  // No params at all (cudaDeviceSynchronize) must not crash.
  EXPECT_EQ(CudaFactsFromCuptiParams(CudaApi::k_cudaDeviceSynchronize, nullptr, true).bytes, 0u);
}

}  // namespace
}  // namespace gs
