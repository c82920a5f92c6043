// The activity API entry points: enabling kinds, buffer callbacks, flushing, dropped records,
// timestamps, thread ids, external correlation and activity attributes. The work is done in
// activity_records.cc (what gets recorded) and activity_buffers.cc (the buffer protocol).
#include <cupti.h>

#include <atomic>
#include <cstring>

#include "activity_buffers.h"
#include "activity_records.h"
#include "driver_attachment.h"
#include "injected_faults.h"
#include "timestamp_clock.h"

namespace simgpu_cupti {
namespace {

using Kind = CUpti_ActivityKind;

// Kinds whose collection CUPTI 13.0 removed with the legacy Event/Metric profiler.
bool IsLegacyProfilerKind(Kind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_EVENT:
    case CUPTI_ACTIVITY_KIND_METRIC:
    case CUPTI_ACTIVITY_KIND_SOURCE_LOCATOR:
    case CUPTI_ACTIVITY_KIND_GLOBAL_ACCESS:
    case CUPTI_ACTIVITY_KIND_BRANCH:
    case CUPTI_ACTIVITY_KIND_EVENT_INSTANCE:
    case CUPTI_ACTIVITY_KIND_METRIC_INSTANCE:
    case CUPTI_ACTIVITY_KIND_INSTRUCTION_EXECUTION:
    case CUPTI_ACTIVITY_KIND_SHARED_ACCESS:
    case CUPTI_ACTIVITY_KIND_PC_SAMPLING:
    case CUPTI_ACTIVITY_KIND_PC_SAMPLING_RECORD_INFO:
    case CUPTI_ACTIVITY_KIND_INSTRUCTION_CORRELATION:
    case CUPTI_ACTIVITY_KIND_INSTANTANEOUS_EVENT:
    case CUPTI_ACTIVITY_KIND_INSTANTANEOUS_EVENT_INSTANCE:
    case CUPTI_ACTIVITY_KIND_INSTANTANEOUS_METRIC:
    case CUPTI_ACTIVITY_KIND_INSTANTANEOUS_METRIC_INSTANCE:
      return true;
    default:
      return false;
  }
}

CUptiResult CheckKind(Kind kind) {
  if (kind <= CUPTI_ACTIVITY_KIND_INVALID || kind >= CUPTI_ACTIVITY_KIND_COUNT) {
    return CUPTI_ERROR_INVALID_KIND;
  }
  if (IsLegacyProfilerKind(kind)) return CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED;
  return CUPTI_SUCCESS;
}

CUptiResult Enable(Kind kind) {
  if (CUptiResult r = InjectedFailure(FaultSite::kActivityEnable); r != CUPTI_SUCCESS) return r;
  if (CUptiResult r = CheckKind(kind); r != CUPTI_SUCCESS) return r;
  AttachToDriver();
  SetKindEnabled(kind, true);
  return CUPTI_SUCCESS;
}

// Activity attributes: stored and reported back; none changes simgpu's behaviour (there is no
// device buffer to size). Attributes 3, 4 and 7 are unsupported since CUDA 12.3.
struct AttributeSlot {
  size_t value_size;  // 0: not supported
  uint64_t value;
};
AttributeSlot g_attributes[] = {
    {sizeof(size_t), 3200000},   // DEVICE_BUFFER_SIZE
    {sizeof(size_t), 8388608},   // DEVICE_BUFFER_SIZE_CDP
    {sizeof(size_t), 250},       // DEVICE_BUFFER_POOL_LIMIT
    {0, 0},                      // PROFILING_SEMAPHORE_POOL_SIZE
    {0, 0},                      // PROFILING_SEMAPHORE_POOL_LIMIT
    {sizeof(uint8_t), 0},        // ZEROED_OUT_ACTIVITY_BUFFER
    {sizeof(size_t), 3},         // DEVICE_BUFFER_PRE_ALLOCATE_VALUE
    {0, 0},                      // PROFILING_SEMAPHORE_PRE_ALLOCATE_VALUE
    {sizeof(uint8_t), 0},        // MEM_ALLOCATION_TYPE_HOST_PINNED
    {sizeof(uint8_t), 1},        // PER_THREAD_ACTIVITY_BUFFER
    {sizeof(size_t), 16777216},  // DEVICE_BUFFER_SIZE_DEVICE_GRAPHS
};

AttributeSlot* FindAttribute(CUpti_ActivityAttribute attr) {
  auto index = static_cast<size_t>(attr);
  if (index >= sizeof(g_attributes) / sizeof(g_attributes[0])) return nullptr;
  return &g_attributes[index];
}

}  // namespace
}  // namespace simgpu_cupti

using simgpu_cupti::FaultSite;
using simgpu_cupti::InjectedFailure;

extern "C" {

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
  return simgpu_cupti::Enable(kind);
}

// Existing contexts/streams/devices are not dumped: simgpu's driver does not list them.
CUptiResult CUPTIAPI cuptiActivityEnableAndDump(CUpti_ActivityKind kind) {
  return simgpu_cupti::Enable(kind);
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) {
  if (CUptiResult r = simgpu_cupti::CheckKind(kind); r != CUPTI_SUCCESS) return r;
  simgpu_cupti::SetKindEnabled(kind, false);
  return CUPTI_SUCCESS;
}

// simgpu has one context per device and every record is global, so the per-context switches act
// on the whole process.
CUptiResult CUPTIAPI cuptiActivityEnableContext(CUcontext context, CUpti_ActivityKind kind) {
  if (context == nullptr) return CUPTI_ERROR_INVALID_CONTEXT;
  return simgpu_cupti::Enable(kind);
}

CUptiResult CUPTIAPI cuptiActivityDisableContext(CUcontext context, CUpti_ActivityKind kind) {
  if (context == nullptr) return CUPTI_ERROR_INVALID_CONTEXT;
  return cuptiActivityDisable(kind);
}

CUptiResult CUPTIAPI cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) {
  if (CUptiResult r = InjectedFailure(FaultSite::kNeedsDriver); r != CUPTI_SUCCESS) return r;
  if (!simgpu_cupti::SetRuntimeApiRecorded(cbid, enable != 0)) return CUPTI_ERROR_INVALID_PARAMETER;
  simgpu_cupti::AttachToDriver();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) {
  if (CUptiResult r = InjectedFailure(FaultSite::kNeedsDriver); r != CUPTI_SUCCESS) return r;
  if (!simgpu_cupti::SetDriverApiRecorded(cbid, enable != 0)) return CUPTI_ERROR_INVALID_PARAMETER;
  simgpu_cupti::AttachToDriver();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(
    CUpti_BuffersCallbackRequestFunc funcBufferRequested,
    CUpti_BuffersCallbackCompleteFunc funcBufferCompleted) {
  if (funcBufferRequested == nullptr || funcBufferCompleted == nullptr) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  simgpu_cupti::RegisterBufferCallbacks(funcBufferRequested, funcBufferCompleted);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag) {
  if (CUptiResult r = InjectedFailure(FaultSite::kNeedsDriver); r != CUPTI_SUCCESS) return r;
  return simgpu_cupti::FlushAllBuffers(flag);
}

// Deprecated: context and stream are ignored, as in CUPTI 13.
CUptiResult CUPTIAPI cuptiActivityFlush(CUcontext /*context*/, uint32_t /*streamId*/, uint32_t flag) {
  return cuptiActivityFlushAll(flag);
}

CUptiResult CUPTIAPI cuptiActivityFlushPeriod(uint32_t time) {
  if (CUptiResult r = InjectedFailure(FaultSite::kNeedsDriver); r != CUPTI_SUCCESS) return r;
  simgpu_cupti::SetFlushPeriodMs(time);
  return CUPTI_SUCCESS;
}

// All buffers are global since CUDA 6.0, so every (context, stream) reads the one count.
CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext /*context*/, uint32_t /*streamId*/,
                                                       size_t* dropped) {
  if (dropped == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *dropped = simgpu_cupti::TakeDroppedRecordCount();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t* timestamp) {
  if (timestamp == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *timestamp = simgpu_cupti::TimestampNow();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc funcTimestamp) {
  if (funcTimestamp == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  if (CUptiResult r = InjectedFailure(FaultSite::kNeedsDriver); r != CUPTI_SUCCESS) return r;
  simgpu_cupti::SetTimestampCallback(funcTimestamp);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType type) {
  if (CUptiResult r = InjectedFailure(FaultSite::kNeedsDriver); r != CUPTI_SUCCESS) return r;
  if (type != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT && type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  simgpu_cupti::SetThreadIdType(type);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetThreadIdType(CUpti_ActivityThreadIdType* type) {
  if (CUptiResult r = InjectedFailure(FaultSite::kNeedsDriver); r != CUPTI_SUCCESS) return r;
  if (type == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *type = simgpu_cupti::GetThreadIdType();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                            uint64_t id) {
  if (CUptiResult r = InjectedFailure(FaultSite::kNeedsDriver); r != CUPTI_SUCCESS) return r;
  if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID || kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  simgpu_cupti::PushExternalCorrelationId(kind, id);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                           uint64_t* lastId) {
  if (CUptiResult r = InjectedFailure(FaultSite::kNeedsDriver); r != CUPTI_SUCCESS) return r;
  if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID || kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  return simgpu_cupti::PopExternalCorrelationId(kind, lastId) ? CUPTI_SUCCESS
                                                              : CUPTI_ERROR_QUEUE_EMPTY;
}

CUptiResult CUPTIAPI cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t* valueSize,
                                               void* value) {
  if (valueSize == nullptr || value == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  simgpu_cupti::AttributeSlot* slot = simgpu_cupti::FindAttribute(attr);
  if (slot == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  if (slot->value_size == 0) return CUPTI_ERROR_NOT_SUPPORTED;
  if (*valueSize < slot->value_size) return CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT;
  uint64_t v = 0;
  std::memcpy(&v, value, slot->value_size);  // little-endian: the low bytes hold the value
  slot->value = v;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetAttribute(CUpti_ActivityAttribute attr, size_t* valueSize,
                                               void* value) {
  if (valueSize == nullptr || value == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  simgpu_cupti::AttributeSlot* slot = simgpu_cupti::FindAttribute(attr);
  if (slot == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  if (slot->value_size == 0) return CUPTI_ERROR_NOT_SUPPORTED;
  if (*valueSize < slot->value_size) return CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT;
  std::memcpy(value, &slot->value, slot->value_size);
  *valueSize = slot->value_size;
  return CUPTI_SUCCESS;
}

// Switches that real CUPTI accepts and that change nothing simgpu can model (no queued/submitted
// timestamps, launch attributes, device graphs, allocation sources or event device timestamps).
CUptiResult CUPTIAPI cuptiActivityEnableLatencyTimestamps(uint8_t) { return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiActivityEnableLaunchAttributes(uint8_t) { return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiActivityEnableDeviceGraph(uint8_t) { return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiActivityEnableAllocationSource(uint8_t) { return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiActivityEnableAllSyncRecords(uint8_t) { return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiActivityEnableCudaEventDeviceTimestamps(uint8_t) { return CUPTI_SUCCESS; }

// Hardware trace exists on Blackwell only; simgpu reports no such device.
CUptiResult CUPTIAPI cuptiActivityEnableHWTrace(uint8_t) { return CUPTI_ERROR_NOT_SUPPORTED; }

}  // extern "C"
