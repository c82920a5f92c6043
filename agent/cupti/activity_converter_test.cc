// activity_converter_test.cc — real CUPTI 13 record structs built in memory.
#include "agent/cupti/activity_converter.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace gs
