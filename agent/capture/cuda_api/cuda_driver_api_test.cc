// cuda_driver_api_test.cc — the table derived from cuda_driver_api.def: cbids and names round-trip,
// and CUPTI's driver params structs decode into the facts a record needs (streams, bytes, copy
// directions, allocation addresses), as the runtime table's do (cuda_api_test.cc).
#include "agent/capture/cuda_api/cuda_driver_api.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace gs {
namespace {

TEST(CudaDriverApiTableTest, NamesAndCbidsAreUniqueAndRoundTrip) {
  std::set<std::string> names;
  std::set<uint32_t> cbids;
  for (size_t i = 0; i < kCudaDriverApiCount; ++i) {
    const CudaApiInfo& info = kCudaDriverApiInfo[i];
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    EXPECT_TRUE(cbids.insert(info.cupti_cbid).second) << info.name;
    EXPECT_TRUE(info.recorded) << info.name;
    EXPECT_NE(info.effect, CudaApiEffect::kSetDevice) << info.name;  // reads cudaSetDevice's params
    CudaDriverApi api;
    ASSERT_TRUE(CudaDriverApiFromCupti(info.cupti_cbid, &api)) << info.name;
    EXPECT_EQ(static_cast<size_t>(api), i);
    EXPECT_STREQ(CudaDriverApiName(static_cast<uint16_t>(info.cupti_cbid)), info.name);
    EXPECT_STREQ(CudaApiName(ApiSource::kCuptiDriverCallback, static_cast<uint16_t>(info.cupti_cbid)),
                 info.name);
  }
  // cupti_driver_cbid.h's numbers for the launches Triton and Kineto care about.
  EXPECT_EQ(InfoOf(CudaDriverApi::k_cuLaunchKernel).cupti_cbid, 307u);
  EXPECT_EQ(InfoOf(CudaDriverApi::k_cuLaunchKernelEx).cupti_cbid,
            static_cast<uint32_t>(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx));
  CudaDriverApi api;
  EXPECT_FALSE(CudaDriverApiFromCupti(CUPTI_DRIVER_TRACE_CBID_cuInit, &api));  // not recorded
  EXPECT_EQ(CudaDriverApiName(CUPTI_DRIVER_TRACE_CBID_cuInit), nullptr);
}

TEST(CudaDriverApiTableTest, ClassesFollowTheFunction) {
  EXPECT_EQ(InfoOf(CudaDriverApi::k_cuLaunchKernelEx).api_class, ApiClass::kLaunch);
  EXPECT_EQ(InfoOf(CudaDriverApi::k_cuLaunchKernelEx_ptsz).flags, kApiFlagAsync | kApiFlagPerThreadStream);
  EXPECT_EQ(InfoOf(CudaDriverApi::k_cuMemcpyHtoD_v2).flags, 0);
  EXPECT_EQ(InfoOf(CudaDriverApi::k_cuMemMap).api_class, ApiClass::kMalloc);    // expandable segments
  EXPECT_EQ(InfoOf(CudaDriverApi::k_cuMemUnmap).api_class, ApiClass::kFree);
  EXPECT_EQ(InfoOf(CudaDriverApi::k_cuMemHostAlloc).effect, CudaApiEffect::kAddPinned);
  EXPECT_EQ(InfoOf(CudaDriverApi::k_cuMemFreeHost).effect, CudaApiEffect::kRemoveHost);
  EXPECT_EQ(InfoOf(CudaDriverApi::k_cuCtxSynchronize).api_class, ApiClass::kDeviceSync);
}

TEST(CudaDriverApiTableTest, LaunchExReadsItsStreamFromTheLaunchConfig) {
  CUlaunchConfig config{};
  config.hStream = reinterpret_cast<CUstream>(0x5150);
  int f = 0;
  cuLaunchKernelEx_params p{&config, reinterpret_cast<CUfunction>(&f), nullptr, nullptr};
  CudaCallFacts facts = CudaDriverFactsFromCuptiParams(CudaDriverApi::k_cuLaunchKernelEx, &p, true);
  EXPECT_EQ(facts.stream, 0x5150u);
  EXPECT_EQ(facts.address, reinterpret_cast<uintptr_t>(&f));
  EXPECT_EQ(facts.copy_kind, kNotACopy);
  // _ptsz with stream 0 is the per-thread stream; a null config must not crash.
  config.hStream = nullptr;
  EXPECT_EQ(CudaDriverFactsFromCuptiParams(CudaDriverApi::k_cuLaunchKernelEx_ptsz, &p, true).stream,
            reinterpret_cast<uintptr_t>(cudaStreamPerThread));
  cuLaunchKernelEx_params none{nullptr, nullptr, nullptr, nullptr};
  EXPECT_EQ(CudaDriverFactsFromCuptiParams(CudaDriverApi::k_cuLaunchKernelEx, &none, true).stream, 0u);
}

TEST(CudaDriverApiTableTest, CopiesNameTheirDirectionAndHostSide) {
  char host[64];
  const CUdeviceptr dev = 0x7000'0000'2000ull;
  const CUstream stream = reinterpret_cast<CUstream>(0x77);
  cuMemcpyHtoDAsync_v2_params h2d{dev, host, 48, stream};
  CudaCallFacts f = CudaDriverFactsFromCuptiParams(CudaDriverApi::k_cuMemcpyHtoDAsync_v2, &h2d, true);
  EXPECT_EQ(f.copy_kind, cudaMemcpyHostToDevice);
  EXPECT_EQ(f.bytes, 48u);
  EXPECT_EQ(f.stream, 0x77u);
  EXPECT_EQ(f.src, host);
  EXPECT_EQ(f.dst, reinterpret_cast<const void*>(dev));
  cuMemcpyDtoH_v2_params d2h{host, dev, 16};
  f = CudaDriverFactsFromCuptiParams(CudaDriverApi::k_cuMemcpyDtoH_v2, &d2h, true);
  EXPECT_EQ(f.copy_kind, cudaMemcpyDeviceToHost);
  EXPECT_EQ(f.dst, host);
  EXPECT_EQ(f.stream, 0u);
  cuMemcpyAsync_params unified{dev, dev + 64, 8, stream};
  EXPECT_EQ(CudaDriverFactsFromCuptiParams(CudaDriverApi::k_cuMemcpyAsync, &unified, true).copy_kind,
            cudaMemcpyDefault);
  cuMemsetD32Async_params set{dev, 7, 100, stream};
  EXPECT_EQ(CudaDriverFactsFromCuptiParams(CudaDriverApi::k_cuMemsetD32Async, &set, true).bytes, 400u);
}

TEST(CudaDriverApiTableTest, AllocationAddressIsReadOnlyOnSuccess) {
  CUdeviceptr out = 0xabc000;
  cuMemAlloc_v2_params p{&out, 4096};
  EXPECT_EQ(CudaDriverFactsFromCuptiParams(CudaDriverApi::k_cuMemAlloc_v2, &p, true).address, 0xabc000u);
  EXPECT_EQ(CudaDriverFactsFromCuptiParams(CudaDriverApi::k_cuMemAlloc_v2, &p, false).address, 0u);
  EXPECT_EQ(CudaDriverFactsFromCuptiParams(CudaDriverApi::k_cuMemAlloc_v2, &p, true).bytes, 4096u);
  EXPECT_EQ(CudaDriverFactsFromCuptiParams(CudaDriverApi::k_cuCtxSynchronize, nullptr, true).bytes, 0u);
}

}  // namespace
}  // namespace gs
