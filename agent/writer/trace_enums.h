// trace_enums.h — the agent's record enums (agent/record/events.h) as the trace schema's
// (proto/gstrace.proto), checked.
//
// The rings hold small fixed-size records whose enums are the agent's own (the hot path must not
// depend on protobuf code); the writer converts them when it encodes a chunk. Each conversion
// below is a cast. The lists below tie every enumerator to the schema's value (proto/enum_tie.h):
// a value added to, removed from or moved in either definition alone fails the build here instead
// of shifting another silently. Adding an enumerator: add it in events.h, in gstrace.proto, and
// its line below (or a SCHEMA_ONLY line for a schema value the agent never records).
#ifndef GPUSTALL_AGENT_WRITER_TRACE_ENUMS_H_
#define GPUSTALL_AGENT_WRITER_TRACE_ENUMS_H_

#include "agent/record/events.h"
#include "proto/enum_tie.h"
#include "proto/gstrace.pb.h"

namespace gs {
namespace trace_enums_internal {

namespace pb = gpustall::trace;

#define GS_TRACE_API_CLASSES(PAIR, SCHEMA_ONLY)                     \
  PAIR(ApiClass::kOther, pb::API_CLASS_OTHER)                       \
  PAIR(ApiClass::kLaunch, pb::API_CLASS_LAUNCH)                     \
  PAIR(ApiClass::kMemcpy, pb::API_CLASS_MEMCPY)                     \
  PAIR(ApiClass::kMemset, pb::API_CLASS_MEMSET)                     \
  PAIR(ApiClass::kMalloc, pb::API_CLASS_MALLOC)                     \
  PAIR(ApiClass::kFree, pb::API_CLASS_FREE)                         \
  PAIR(ApiClass::kHostAlloc, pb::API_CLASS_HOST_ALLOC)              \
  PAIR(ApiClass::kHostFree, pb::API_CLASS_HOST_FREE)                \
  PAIR(ApiClass::kStreamSync, pb::API_CLASS_STREAM_SYNC)            \
  PAIR(ApiClass::kDeviceSync, pb::API_CLASS_DEVICE_SYNC)            \
  PAIR(ApiClass::kEventSync, pb::API_CLASS_EVENT_SYNC)              \
  PAIR(ApiClass::kStreamWaitEvent, pb::API_CLASS_STREAM_WAIT_EVENT) \
  PAIR(ApiClass::kQuery, pb::API_CLASS_QUERY)                       \
  PAIR(ApiClass::kEventRecord, pb::API_CLASS_EVENT_RECORD)

#define GS_TRACE_API_SOURCES(PAIR, SCHEMA_ONLY)                               \
  SCHEMA_ONLY(pb::API_SOURCE_UNSPECIFIED)                                     \
  PAIR(ApiSource::kInterposer, pb::API_SOURCE_INTERPOSER)                     \
  PAIR(ApiSource::kCuptiCallback, pb::API_SOURCE_CUPTI_CALLBACK)              \
  PAIR(ApiSource::kCuptiDriverCallback, pb::API_SOURCE_CUPTI_DRIVER_CALLBACK)

#define GS_TRACE_MEM_KINDS(PAIR, SCHEMA_ONLY)          \
  PAIR(MemKind::kUnknown, pb::MEM_KIND_UNKNOWN)        \
  PAIR(MemKind::kPageable, pb::MEM_KIND_PAGEABLE)      \
  PAIR(MemKind::kPinned, pb::MEM_KIND_PINNED)          \
  PAIR(MemKind::kDevice, pb::MEM_KIND_DEVICE)          \
  PAIR(MemKind::kArray, pb::MEM_KIND_ARRAY)            \
  PAIR(MemKind::kManaged, pb::MEM_KIND_MANAGED)

#define GS_TRACE_ACTIVITY_KINDS(PAIR, SCHEMA_ONLY)                  \
  SCHEMA_ONLY(pb::ACTIVITY_KIND_UNSPECIFIED)                        \
  PAIR(ActivityKind::kKernel, pb::ACTIVITY_KIND_KERNEL)             \
  PAIR(ActivityKind::kMemcpy, pb::ACTIVITY_KIND_MEMCPY)             \
  PAIR(ActivityKind::kMemset, pb::ACTIVITY_KIND_MEMSET)             \
  PAIR(ActivityKind::kSync, pb::ACTIVITY_KIND_SYNC)                 \
  PAIR(ActivityKind::kMemoryAlloc, pb::ACTIVITY_KIND_MEMORY_ALLOC)  \
  PAIR(ActivityKind::kMemoryFree, pb::ACTIVITY_KIND_MEMORY_FREE)    \
  PAIR(ActivityKind::kCollective, pb::ACTIVITY_KIND_COLLECTIVE)

#define GS_TRACE_ACTIVITY_SOURCES(PAIR, SCHEMA_ONLY)                \
  SCHEMA_ONLY(pb::ACTIVITY_SOURCE_UNSPECIFIED)                      \
  PAIR(ActivitySource::kCupti, pb::ACTIVITY_SOURCE_CUPTI)           \
  PAIR(ActivitySource::kEventPair, pb::ACTIVITY_SOURCE_EVENT_PAIR)

// A host wait's state is one of three thread states (events.h HostWaitState).
#define GS_TRACE_HOST_WAIT_STATES(PAIR, SCHEMA_ONLY)           \
  SCHEMA_ONLY(pb::THREAD_STATE_UNKNOWN)                        \
  SCHEMA_ONLY(pb::THREAD_STATE_RUNNING)                        \
  SCHEMA_ONLY(pb::THREAD_STATE_RUNNABLE)                       \
  SCHEMA_ONLY(pb::THREAD_STATE_SLEEPING)                       \
  PAIR(HostWaitState::kIoWait, pb::THREAD_STATE_IO_WAIT)       \
  PAIR(HostWaitState::kLockWait, pb::THREAD_STATE_LOCK_WAIT)   \
  SCHEMA_ONLY(pb::THREAD_STATE_IN_CUDA)                        \
  PAIR(HostWaitState::kIdle, pb::THREAD_STATE_IDLE)

// A missing case in a Tied() switch (an enumerator on one side only) is an error, not a warning.
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"
GS_ENUM_TIE(ApiClass, pb, ApiClass, GS_TRACE_API_CLASSES)
GS_ENUM_TIE(ApiSource, pb, ApiSource, GS_TRACE_API_SOURCES)
GS_ENUM_TIE(MemKind, pb, MemKind, GS_TRACE_MEM_KINDS)
GS_ENUM_TIE(ActivityKind, pb, ActivityKind, GS_TRACE_ACTIVITY_KINDS)
GS_ENUM_TIE(ActivitySource, pb, ActivitySource, GS_TRACE_ACTIVITY_SOURCES)
GS_ENUM_TIE(HostWaitState, pb, ThreadState, GS_TRACE_HOST_WAIT_STATES)
#pragma GCC diagnostic pop

#undef GS_TRACE_API_CLASSES
#undef GS_TRACE_API_SOURCES
#undef GS_TRACE_MEM_KINDS
#undef GS_TRACE_ACTIVITY_KINDS
#undef GS_TRACE_ACTIVITY_SOURCES
#undef GS_TRACE_HOST_WAIT_STATES

}  // namespace trace_enums_internal

inline gpustall::trace::ApiClass ToTrace(ApiClass c) { return static_cast<gpustall::trace::ApiClass>(c); }
inline gpustall::trace::ApiSource ToTrace(ApiSource s) { return static_cast<gpustall::trace::ApiSource>(s); }
inline gpustall::trace::MemKind ToTrace(MemKind k) { return static_cast<gpustall::trace::MemKind>(k); }
inline gpustall::trace::ActivityKind ToTrace(ActivityKind k) {
  return static_cast<gpustall::trace::ActivityKind>(k);
}
inline gpustall::trace::ThreadState ToTrace(HostWaitState s) { return static_cast<gpustall::trace::ThreadState>(s); }
inline gpustall::trace::ActivitySource ToTrace(ActivitySource s) {
  return static_cast<gpustall::trace::ActivitySource>(s);
}

}  // namespace gs

#endif  // GPUSTALL_AGENT_WRITER_TRACE_ENUMS_H_
