// records.h — the decoded, in-memory form of the trace's high-volume records.
//
// One struct per columnar batch of gstrace.proto, with absolute CLOCK_MONOTONIC timestamps and
// interned ids left as ids (resolve them with the reader's tables). The batch codec
// (proto/batch_codec.h) converts between these and the batch messages; the TraceBuilder takes
// them, the analyzer's reader hands them out.
//
// Plain data: copyable, no pointers, no ownership.
#ifndef GPUSTALL_PROTO_RECORDS_H_
#define GPUSTALL_PROTO_RECORDS_H_

#include <cstdint>

#include "proto/gstrace.pb.h"

namespace gs::trace {

using gpustall::trace::ActivityKind;
using gpustall::trace::ActivitySource;
using gpustall::trace::ApiClass;
using gpustall::trace::MemKind;
using gpustall::trace::MemoryEventKind;
using gpustall::trace::ThreadState;

// A host-side CUDA API call (ApiCallBatch).
struct ApiCallRecord {
  uint64_t thread_id = 0;       // OS tid
  uint64_t enter_ns = 0;
  uint64_t exit_ns = 0;         // >= enter_ns
  uint64_t bytes = 0;
  uint64_t stream = 0;          // cudaStream_t as an integer
  uint64_t address = 0;
  uint32_t function = 0;        // ApiFunction id
  uint32_t correlation_id = 0;
  uint32_t stack = 0;           // Stack id; 0 = none
  int32_t result = 0;           // cudaError_t
  uint32_t device = 0;
  uint8_t copy_kind = 0;        // cudaMemcpyKind
  MemKind src_kind = gpustall::trace::MEM_KIND_UNKNOWN;
  MemKind dst_kind = gpustall::trace::MEM_KIND_UNKNOWN;
  uint8_t flags = 0;            // bit 0 async, bit 1 per-thread default stream
  // Not stored per record (it belongs to the ApiFunction); the reader fills it from the function
  // table so the analysis needs no lookup. Encoders ignore it.
  ApiClass api_class = gpustall::trace::API_CLASS_OTHER;
};

// A piece of GPU work or a CUPTI sync/memory record (GpuActivityBatch).
struct GpuActivityRecord {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;          // >= start_ns
  uint64_t bytes = 0;
  uint64_t address = 0;
  uint32_t correlation_id = 0;
  uint32_t device = 0;
  uint32_t stream = 0;          // CUPTI stream id
  uint32_t context = 0;
  uint32_t sync_type = 0;
  uint32_t name = 0;            // string id of the kernel name; 0 = none
  uint64_t graph_node_id = 0;   // kernels of a graph replay: the executable graph's node id
  uint32_t launch_config = 0;   // kernels: LaunchConfig id; 0 = none
  ActivityKind kind = gpustall::trace::ACTIVITY_KIND_UNSPECIFIED;
  ActivitySource source = gpustall::trace::ACTIVITY_SOURCE_UNSPECIFIED;
  uint8_t copy_kind = 0;        // CUpti_ActivityMemcpyKind
  MemKind src_kind = gpustall::trace::MEM_KIND_UNKNOWN;
  MemKind dst_kind = gpustall::trace::MEM_KIND_UNKNOWN;
  uint8_t flags = 0;            // CUPTI activity flags (bit 0: memcpy async)
};

// A memory event that is neither an API call nor an activity (MemoryEventBatch).
struct MemoryEventRecord {
  uint64_t time_ns = 0;
  uint64_t address = 0;
  uint64_t bytes = 0;
  uint64_t stream = 0;
  uint64_t thread_id = 0;
  uint32_t device = 0;
  uint32_t stack = 0;
  MemoryEventKind kind = gpustall::trace::MEMORY_EVENT_UNSPECIFIED;
  MemKind mem_kind = gpustall::trace::MEM_KIND_UNKNOWN;
};

// A periodic sample of a thread (SampleBatch).
struct SampleRecord {
  uint64_t thread_id = 0;
  uint64_t time_ns = 0;
  uint64_t cpu_time_delta_ns = 0;
  uint32_t stack = 0;
  uint32_t cpu = 0;
  ThreadState state = gpustall::trace::THREAD_STATE_UNKNOWN;
};

// A blocking libc call that blocked long enough to be recorded (HostWaitBatch).
struct HostWaitRecord {
  uint64_t thread_id = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t function = 0;  // InternedString id
  uint32_t stack = 0;
  ThreadState state = gpustall::trace::THREAD_STATE_UNKNOWN;
};

// A closed NVTX range (NvtxRangeBatch).
struct NvtxRangeRecord {
  uint64_t thread_id = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;          // >= start_ns
  uint32_t name = 0;            // string id
  uint32_t domain = 0;          // string id; 0 = default domain
  uint32_t category = 0;
  uint32_t color = 0;
  uint32_t depth = 0;
  uint32_t stack = 0;
};

// --- Column encoding rules shared by the encoders (batch_codec.h) ---

// attrs column: copy_kind | src_kind << 4 | dst_kind << 8 | flags << 12; kinds above 14 are
// written as 15.
inline uint32_t PackAttrs(uint32_t copy_kind, uint32_t src_kind, uint32_t dst_kind,
                          uint32_t flags) {
  const auto nibble = [](uint32_t v) { return v > 14 ? 15u : v; };
  return nibble(copy_kind) | nibble(src_kind) << 4 | nibble(dst_kind) << 8 | (flags & 0xff) << 12;
}
// GpuActivityBatch.kind column: kind | source << 4.
inline uint32_t PackActivityKind(ActivityKind kind, ActivitySource source) {
  const auto nibble = [](uint32_t v) { return v > 14 ? 15u : v; };
  return nibble(static_cast<uint32_t>(kind)) | nibble(static_cast<uint32_t>(source)) << 4;
}
// --- and by the decoders (batch_codec.h, batch_wire.h) ---

// An enum column's value, values this build does not know read as the "unspecified" 0. The enums
// are contiguous from 0, so a range check is the same as the generated (out-of-line) *_IsValid,
// minus the call.
template <typename Enum>
inline Enum ToEnum(uint32_t v, Enum max) {
  return v <= static_cast<uint32_t>(max) ? static_cast<Enum>(v) : static_cast<Enum>(0);
}
inline MemKind ToMemKind(uint32_t v) { return ToEnum(v, gpustall::trace::MemKind_MAX); }
// The attrs column back into a record's fields (ApiCallRecord, GpuActivityRecord).
template <typename Record>
inline void UnpackAttrs(uint32_t attrs, Record* r) {
  r->copy_kind = static_cast<uint8_t>(attrs & 0xf);
  r->src_kind = ToMemKind(attrs >> 4 & 0xf);
  r->dst_kind = ToMemKind(attrs >> 8 & 0xf);
  r->flags = static_cast<uint8_t>(attrs >> 12);
}
// The GpuActivityBatch.kind column back into a record's kind and source.
inline void UnpackActivityKind(uint32_t packed, GpuActivityRecord* r) {
  r->kind = ToEnum(packed & 0xf, gpustall::trace::ActivityKind_MAX);
  r->source = ToEnum(packed >> 4 & 0xf, gpustall::trace::ActivitySource_MAX);
}

// *_delta columns: the difference from the previous value, in wrapping unsigned arithmetic so
// that any uint64 round-trips.
inline int64_t Delta(uint64_t value, uint64_t* previous) {
  const auto delta = static_cast<int64_t>(value - *previous);
  *previous = value;
  return delta;
}

}  // namespace gs::trace

#endif  // GPUSTALL_PROTO_RECORDS_H_
