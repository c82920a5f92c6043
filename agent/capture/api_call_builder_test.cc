// api_call_builder_test.cc — pinned/pageable classification and the memory effects of calls.
#include "agent/capture/api_call_builder.h"

#include <gtest/gtest.h>

#include <cstring>

#include "agent/capture/capture_thread_state.h"

namespace gs {
namespace {

TEST(ApiCallBuilderTest, HostSideOfCopyIsPinnedOnlyIfAllocatedSo) {
  static HostMemoryMap map;
  map.Clear();
  alignas(64) static char pinned[256];
  static char pageable[256];
  void* pinned_ptr = pinned;
  cudaHostAlloc_v3020_params alloc{&pinned_ptr, sizeof(pinned), 0};
  const CudaCallFacts af = CudaFactsFromCuptiParams(CudaApi::k_cudaHostAlloc, &alloc, true);
  ApplyCallEffect(CudaApi::k_cudaHostAlloc, af, true, &alloc, map);

  void* dev = reinterpret_cast<void*>(0x7f0000000000ull);
  MemKind dst, src;
  ClassifyCopy(cudaMemcpyHostToDevice, dev, pinned + 10, map, &dst, &src);
  EXPECT_EQ(src, MemKind::kPinned);
  EXPECT_EQ(dst, MemKind::kDevice);
  ClassifyCopy(cudaMemcpyHostToDevice, dev, pageable, map, &dst, &src);
  EXPECT_EQ(src, MemKind::kPageable);
  ClassifyCopy(cudaMemcpyDeviceToHost, pinned, dev, map, &dst, &src);
  EXPECT_EQ(dst, MemKind::kPinned);
  ClassifyCopy(cudaMemcpyDefault, pageable, dev, map, &dst, &src);
  EXPECT_EQ(dst, MemKind::kUnknown);  // with UVA an unknown pointer may be device memory

  cudaFreeHost_v3020_params free_params{pinned};
  ApplyCallEffect(CudaApi::k_cudaFreeHost,
                  CudaFactsFromCuptiParams(CudaApi::k_cudaFreeHost, &free_params, true), true,
                  &free_params, map);
  ClassifyCopy(cudaMemcpyHostToDevice, dev, pinned, map, &dst, &src);
  EXPECT_EQ(src, MemKind::kPageable);
}

TEST(ApiCallBuilderTest, FailedAllocationChangesNothing) {
  static HostMemoryMap map;
  map.Clear();
  static char buffer[64];
  cudaHostRegister_v4000_params reg{buffer, sizeof(buffer), 0};
  ApplyCallEffect(CudaApi::k_cudaHostRegister,
                  CudaFactsFromCuptiParams(CudaApi::k_cudaHostRegister, &reg, false), false, &reg, map);
  EXPECT_EQ(map.size(), 0u);
}

TEST(ApiCallBuilderTest, EventCarriesTableFacts) {
  static HostMemoryMap map;
  map.Clear();
  static char host[128];
  void* dev = reinterpret_cast<void*>(0x7f0000001000ull);
  cudaMemcpyAsync_ptsz_v7000_params p{host, dev, 128, cudaMemcpyDeviceToHost, nullptr};
  ApiCallEvent e;
  std::memset(&e, 0, sizeof(e));
  BuildApiCallEvent(CudaApi::k_cudaMemcpyAsync_ptsz,
                    CudaFactsFromCuptiParams(CudaApi::k_cudaMemcpyAsync_ptsz, &p, true), 0, 2,
                    ApiSource::kInterposer, 5, map, &e);
  EXPECT_EQ(e.api_class, ApiClass::kMemcpy);
  EXPECT_EQ(e.bytes, 128u);
  EXPECT_EQ(e.copy_kind, cudaMemcpyDeviceToHost);
  EXPECT_EQ(e.src_kind, MemKind::kDevice);
  EXPECT_EQ(e.dst_kind, MemKind::kPageable);
  EXPECT_EQ(e.stream, reinterpret_cast<uintptr_t>(cudaStreamPerThread));
  EXPECT_EQ(e.flags, kApiFlagAsync | kApiFlagPerThreadStream);
  EXPECT_EQ(e.device, 2);
  EXPECT_EQ(e.api_id, 5);
}

TEST(ApiCallBuilderTest, SetDeviceUpdatesThisThreadOnly) {
  static HostMemoryMap map;
  cudaSetDevice_v3020_params p{3};
  ApplyCallEffect(CudaApi::k_cudaSetDevice, CudaCallFacts{}, true, &p, map);
  EXPECT_EQ(ThisThreadCaptureState().device, 3);
  ThisThreadCaptureState().device = 0;
}

}  // namespace
}  // namespace gs
