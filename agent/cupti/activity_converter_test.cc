// activity_converter_test.cc — real CUPTI record structs (CUDA 13.0 and 12.x layouts) built in memory.
#include "agent/cupti/activity_converter.h"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

namespace gs {
namespace {

template <typename T>
T Zeroed() {
  T t;
  std::memset(&t, 0, sizeof(t));
  return t;
}

TEST(ActivityConverterTest, KernelRecord) {
  auto k = Zeroed<CUpti_ActivityKernel10>();
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = 1000;
  k.end = 5000;
  k.deviceId = 1;
  k.contextId = 7;
  k.streamId = 13;
  k.correlationId = 42;
  k.name = "train_step";
  k.gridX = 264, k.gridY = 2, k.gridZ = 1;
  k.blockX = 128, k.blockY = 2, k.blockZ = 1;
  k.registersPerThread = 168;
  k.staticSharedMemory = 16384;
  k.dynamicSharedMemory = 98304;
  ActivityConverter c;
  GpuActivityEvent a;
  ASSERT_TRUE(c.Convert(reinterpret_cast<CUpti_Activity*>(&k), &a));
  EXPECT_EQ(a.kind, ActivityKind::kKernel);
  EXPECT_EQ(a.source, ActivitySource::kCupti);
  EXPECT_EQ(a.start_ns, 1000u);
  EXPECT_EQ(a.end_ns, 5000u);
  EXPECT_EQ(a.device, 1u);
  EXPECT_EQ(a.stream_id, 13u);
  EXPECT_EQ(a.correlation_id, 42u);
  EXPECT_STREQ(a.name, "train_step");
  // The launch configuration and resources (how full the kernel kept its device).
  EXPECT_EQ(a.launch_flags, kLaunchConfigKnown | kLaunchResourcesKnown);
  EXPECT_EQ(a.grid[0], 264u);
  EXPECT_EQ(a.grid[1], 2u);
  EXPECT_EQ(a.grid[2], 1u);
  EXPECT_EQ(a.block[0], 128u);
  EXPECT_EQ(a.block[1], 2u);
  EXPECT_EQ(a.block[2], 1u);
  EXPECT_EQ(a.registers_per_thread, 168u);
  EXPECT_EQ(a.static_shared_bytes, 16384u);
  EXPECT_EQ(a.dynamic_shared_bytes, 98304u);
}

TEST(ActivityConverterTest, MemcpyKeepsPageableAndPinnedKinds) {
  auto m = Zeroed<CUpti_ActivityMemcpy6>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  m.bytes = 1 << 20;
  m.start = 10;
  m.end = 20;
  m.correlationId = 9;
  ActivityConverter c;
  GpuActivityEvent a;
  ASSERT_TRUE(c.Convert(reinterpret_cast<CUpti_Activity*>(&m), &a));
  EXPECT_EQ(a.kind, ActivityKind::kMemcpy);
  EXPECT_EQ(a.copy_kind, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
  EXPECT_EQ(a.src_kind, MemKind::kPageable);
  EXPECT_EQ(a.dst_kind, MemKind::kDevice);
  EXPECT_EQ(a.bytes, 1u << 20);
  EXPECT_EQ(a.flags, CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC);
}

TEST(ActivityConverterTest, SyncRecordTakesDeviceFromItsContext) {
  ActivityConverter c;
  GpuActivityEvent a;
  auto k = Zeroed<CUpti_ActivityKernel10>();
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.deviceId = 3;
  k.contextId = 11;
  k.start = 1;
  k.end = 2;
  ASSERT_TRUE(c.Convert(reinterpret_cast<CUpti_Activity*>(&k), &a));
  auto s = Zeroed<CUpti_ActivitySynchronization2>();
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  s.contextId = 11;
  s.streamId = 5;
  s.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  s.start = 100;
  s.end = 300;
  ASSERT_TRUE(c.Convert(reinterpret_cast<CUpti_Activity*>(&s), &a));
  EXPECT_EQ(a.kind, ActivityKind::kSync);
  EXPECT_EQ(a.device, 3u);
  EXPECT_EQ(a.sync_type, static_cast<uint32_t>(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE));
  EXPECT_EQ(a.address, 0u);
}

TEST(ActivityConverterTest, MemoryRecordsAreAllocOrFree) {
  ActivityConverter c;
  GpuActivityEvent a;
  auto m = Zeroed<CUpti_ActivityMemory4>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.address = 0xdead000;
  m.bytes = 4096;
  m.timestamp = 77;
  ASSERT_TRUE(c.Convert(reinterpret_cast<CUpti_Activity*>(&m), &a));
  EXPECT_EQ(a.kind, ActivityKind::kMemoryFree);
  EXPECT_EQ(a.start_ns, 77u);
  EXPECT_EQ(a.end_ns, 77u);
  EXPECT_EQ(a.address, 0xdead000u);
  m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  ASSERT_TRUE(c.Convert(reinterpret_cast<CUpti_Activity*>(&m), &a));
  EXPECT_EQ(a.kind, ActivityKind::kMemoryAlloc);
}

TEST(ActivityConverterTest, OverheadIsSkippedAndMissingTimestampsCounted) {
  ActivityConverter c;
  GpuActivityEvent a;
  auto o = Zeroed<CUpti_ActivityOverhead3>();
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  EXPECT_FALSE(c.Convert(reinterpret_cast<CUpti_Activity*>(&o), &a));
  EXPECT_EQ(c.overhead_records(), 1u);
  auto m = Zeroed<CUpti_ActivityMemset4>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  EXPECT_TRUE(c.Convert(reinterpret_cast<CUpti_Activity*>(&m), &a));
  EXPECT_EQ(c.records_without_timestamps(), 1u);
}

// A CUDA 12.x record ends where 13.0's layout still has fields: the record is placed so that its
// last byte is the last readable byte before a page the test makes inaccessible, so reading any
// 13.0-only field faults (the converter reads 12.0's prefix, activity_converter.cc).
class GuardedRecord {
 public:
  GuardedRecord() {
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    base_ = static_cast<uint8_t*>(mmap(nullptr, 2 * page_, PROT_READ | PROT_WRITE,
                                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    mprotect(base_ + page_, page_, PROT_NONE);
  }
  ~GuardedRecord() { munmap(base_, 2 * page_); }
  // `size` bytes of `record` (a 13.0 struct filled as the 12.x library would) at the guard's edge.
  template <typename T>
  const CUpti_Activity* Place(const T& record, size_t size) {
    uint8_t* at = base_ + page_ - size;
    std::memcpy(at, &record, size);
    return reinterpret_cast<const CUpti_Activity*>(at);
  }

 private:
  size_t page_ = 0;
  uint8_t* base_ = nullptr;
};

TEST(ActivityConverterTest, Cuda12LayoutsAreReadWithoutTouchingThirteenOnlyFields) {
  GuardedRecord guard;
  ActivityConverter c;
  GpuActivityEvent a;

  auto k = Zeroed<CUpti_ActivityKernel10>();  // Kernel9 on 12.x: 208 bytes, no isDeviceLaunched
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = 100;
  k.end = 300;
  k.deviceId = 2;
  k.contextId = 5;
  k.streamId = 17;
  k.correlationId = 77;
  k.graphNodeId = 0x1234;
  k.name = "gemm";
  k.gridX = 7;
  k.registersPerThread = 40;
  k.dynamicSharedMemory = 512;
  ASSERT_TRUE(c.Convert(guard.Place(k, sizeof(CUpti_ActivityKernel9)), &a));
  EXPECT_EQ(a.kind, ActivityKind::kKernel);
  EXPECT_EQ(a.start_ns, 100u);
  EXPECT_EQ(a.end_ns, 300u);
  EXPECT_EQ(a.device, 2u);
  EXPECT_EQ(a.stream_id, 17u);
  EXPECT_EQ(a.correlation_id, 77u);
  EXPECT_EQ(a.graph_node_id, 0x1234u);
  EXPECT_STREQ(a.name, "gemm");
  EXPECT_EQ(a.grid[0], 7u);
  EXPECT_EQ(a.registers_per_thread, 40u);
  EXPECT_EQ(a.dynamic_shared_bytes, 512u);

  auto m = Zeroed<CUpti_ActivityMemcpy6>();  // Memcpy5 until 12.6: 88 bytes; 84..87 padding
  std::memset(&m, 0xA5, sizeof(m));
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  m.flags = 0;
  m.bytes = 4096;
  m.start = 1000;
  m.end = 2000;
  m.deviceId = 2;
  m.contextId = 5;
  m.streamId = 17;
  m.correlationId = 78;
  m.graphNodeId = 0;
  ASSERT_TRUE(c.Convert(guard.Place(m, sizeof(CUpti_ActivityMemcpy5)), &a));
  EXPECT_EQ(a.kind, ActivityKind::kMemcpy);
  EXPECT_EQ(a.bytes, 4096u);
  EXPECT_EQ(a.end_ns, 2000u);
  EXPECT_EQ(a.dst_kind, MemKind::kPinned);
  EXPECT_EQ(a.correlation_id, 78u);

  auto s = Zeroed<CUpti_ActivitySynchronization2>();  // Synchronization until 12.6: 40 bytes
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  s.start = 2100;
  s.end = 2600;
  s.contextId = 5;
  s.streamId = 17;
  s.correlationId = 79;
  s.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  ASSERT_TRUE(c.Convert(guard.Place(s, sizeof(CUpti_ActivitySynchronization)), &a));
  EXPECT_EQ(a.kind, ActivityKind::kSync);
  EXPECT_EQ(a.device, 2u);  // learnt from the context of the records above
  EXPECT_EQ(a.end_ns, 2600u);
  EXPECT_EQ(a.address, 0u);

  auto mem = Zeroed<CUpti_ActivityMemory4>();  // Memory3 until 12.5: 120 bytes, no source
  mem.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  mem.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  mem.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  mem.address = 0x7000;
  mem.bytes = 1 << 20;
  mem.timestamp = 3000;
  mem.deviceId = 2;
  mem.correlationId = 80;
  ASSERT_TRUE(c.Convert(guard.Place(mem, sizeof(CUpti_ActivityMemory3)), &a));
  EXPECT_EQ(a.kind, ActivityKind::kMemoryAlloc);
  EXPECT_EQ(a.address, 0x7000u);
  EXPECT_EQ(a.bytes, 1u << 20);

  auto ms = Zeroed<CUpti_ActivityMemset4>();  // 12.x: pad2 where 13.0 has isDeviceLaunched
  ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  ms.bytes = 256;
  ms.start = 4000;
  ms.end = 4100;
  ms.correlationId = 81;
  ASSERT_TRUE(c.Convert(guard.Place(ms, offsetof(CUpti_ActivityMemset4, isDeviceLaunched)), &a));
  EXPECT_EQ(a.kind, ActivityKind::kMemset);
  EXPECT_EQ(a.bytes, 256u);
}

}  // namespace
}  // namespace gs
