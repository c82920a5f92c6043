// vmm_test.cc — simgpu's virtual memory management (driver.h, "Virtual memory management"), as
// the CUDA driver API reference documents cuMemAddressReserve / cuMemCreate / cuMemMap /
// cuMemSetAccess / cuMemUnmap / cuMemRelease / cuMemAddressFree and PyTorch's expandable segments
// use them: a reserved range is not memory until an allocation is mapped into it; a mapped range
// is device memory for copies and memsets; a released allocation lives until its last mapping
// goes; memory counts against the device from cuMemCreate to that point.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

namespace {

#define CU_OK(call) ASSERT_EQ((call), CUDA_SUCCESS) << #call

size_t UsedBytes() {
  size_t free_bytes = 0, total = 0;
  EXPECT_EQ(cuMemGetInfo(&free_bytes, &total), CUDA_SUCCESS);
  return total - free_bytes;
}

TEST(SimgpuVmm, ReserveCreateMapUseUnmapRelease) {
  CU_OK(cuInit(0));
  CUdevice device;
  CU_OK(cuDeviceGet(&device, 0));
  CUcontext context;
  CU_OK(cuDevicePrimaryCtxRetain(&context, device));
  CU_OK(cuCtxSetCurrent(context));
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  size_t granule = 0;
  CU_OK(cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  ASSERT_GT(granule, 0u);

  const size_t used_before = UsedBytes();
  CUdeviceptr base = 0;
  CU_OK(cuMemAddressReserve(&base, 4 * granule, 0, 0, 0));
  EXPECT_EQ(UsedBytes(), used_before);  // address space only
  EXPECT_EQ(cuMemAddressReserve(&base, granule + 1, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
  CUmemGenericAllocationHandle first, second;
  CU_OK(cuMemCreate(&first, granule, &prop, 0));
  CU_OK(cuMemCreate(&second, granule, &prop, 0));
  EXPECT_EQ(UsedBytes(), used_before + 2 * granule);
  CU_OK(cuMemMap(base, granule, 0, first, 0));
  CU_OK(cuMemMap(base + granule, granule, 0, second, 0));
  EXPECT_EQ(cuMemMap(base, granule, 0, second, 0), CUDA_ERROR_INVALID_VALUE);  // already mapped
  EXPECT_EQ(cuMemMap(base + 2 * granule, granule, granule, second, 0), CUDA_ERROR_INVALID_VALUE);  // offset
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU_OK(cuMemSetAccess(base, 2 * granule, &access, 1));
  EXPECT_EQ(cuMemSetAccess(base, 3 * granule, &access, 1), CUDA_ERROR_INVALID_VALUE);  // third not mapped

  // The two mappings are device memory: one memset over both, a copy back to the host.
  CU_OK(cuMemsetD8_v2(base, 7, 2 * granule));
  unsigned char host[16] = {};
  CU_OK(cuMemcpyDtoH_v2(host, base + granule, sizeof host));
  EXPECT_EQ(host[0], 7);
  EXPECT_NE(cuMemsetD8_v2(base + 2 * granule, 7, 16), CUDA_SUCCESS);  // reserved, not mapped
  EXPECT_EQ(cudaFree(reinterpret_cast<void*>(base)), cudaErrorInvalidValue);  // not cudaMalloc's
  (void)cudaGetLastError();

  // Released while mapped: still counted until its mapping goes.
  CU_OK(cuMemRelease(first));
  EXPECT_EQ(UsedBytes(), used_before + 2 * granule);
  EXPECT_EQ(cuMemAddressFree(base, 4 * granule), CUDA_ERROR_INVALID_VALUE);  // still mapped
  CU_OK(cuMemUnmap(base, granule));
  EXPECT_EQ(UsedBytes(), used_before + granule);
  CU_OK(cuMemUnmap(base + granule, granule));
  CU_OK(cuMemRelease(second));
  EXPECT_EQ(UsedBytes(), used_before);
  CU_OK(cuMemAddressFree(base, 4 * granule));
}

}  // namespace
