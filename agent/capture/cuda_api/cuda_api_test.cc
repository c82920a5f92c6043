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
