// activity_records.h — which activity kinds are enabled, and the real CUPTI 13 records built from
// what simgpu's driver reports.
//
// Records are written only for enabled kinds (and, for RUNTIME/DRIVER, enabled cbids), each as
// the struct CUPTI 13.0 uses for its kind:
//   CONCURRENT_KERNEL / KERNEL  CUpti_ActivityKernel10   when the kernel completes on the device
//   MEMCPY                      CUpti_ActivityMemcpy6    when the copy completes
//   MEMCPY2                     CUpti_ActivityMemcpyPtoP4, when a peer copy completes (only)
//   MEMSET                      CUpti_ActivityMemset4    when the memset completes
//   SYNCHRONIZATION             CUpti_ActivitySynchronization2, when the host leaves the wait
//   MEMORY2                     CUpti_ActivityMemory4    at each allocation and each release
//   MEMORY                      CUpti_ActivityMemory     at the release (start = allocation)
//   RUNTIME / DRIVER            CUpti_ActivityAPI        after the call's exit callback
//   EXTERNAL_CORRELATION        CUpti_ActivityExternalCorrelation, before each API record made
//                               while the thread has pushed an external id (one per kind)
//   STREAM                      CUpti_ActivityStream     when a stream is created
//   OVERHEAD                    CUpti_ActivityOverhead3  ACTIVITY_BUFFER_REQUEST: time spent in
//                               the tool's bufferRequested, on the thread that needed the buffer
// Timestamps are mapped onto CUPTI's clock (timestamp_clock.h); correlation ids are the driver's,
// i.e. the same as the callback's correlationId and the API record's.
//
// Thread safety: every function may be called from any thread.
#ifndef GPUSTALL_TESTS_SIMGPU_CUPTI_ACTIVITY_RECORDS_H_
#define GPUSTALL_TESTS_SIMGPU_CUPTI_ACTIVITY_RECORDS_H_

#include <cstddef>
#include <cstdint>

#include <cupti.h>

#include "tool_hooks.h"

namespace simgpu_cupti {

// cuptiActivityEnable/Disable semantics for a kind already validated as accepted.
void SetKindEnabled(CUpti_ActivityKind kind, bool enabled);
bool KindEnabled(CUpti_ActivityKind kind);
void DisableAllKinds();

// cuptiActivityEnableRuntimeApi / EnableDriverApi. False for an out-of-range cbid.
bool SetRuntimeApiRecorded(uint32_t cbid, bool enabled);
bool SetDriverApiRecorded(uint32_t cbid, bool enabled);

// cuptiSetThreadIdType / cuptiGetThreadIdType.
void SetThreadIdType(CUpti_ActivityThreadIdType type);
CUpti_ActivityThreadIdType GetThreadIdType();

// cuptiActivityPush/PopExternalCorrelationId for the calling thread. Pop returns false when the
// thread has no id pushed for `kind`.
void PushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id);
bool PopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t* last_id);

// The device of a context id, as seen in the driver's operation records so far.
bool DeviceOfContext(uint32_t context_id, uint32_t* device_id);

// Driver hooks. RecordApi runs on the application thread that made the call.
void RecordApi(const SimgpuApiRecord& api);
void RecordOp(const SimgpuOpRecord& op);

}  // namespace simgpu_cupti

#endif  // GPUSTALL_TESTS_SIMGPU_CUPTI_ACTIVITY_RECORDS_H_
