// trace_enums.h — the agent's record enums (agent/record/events.h) as the trace schema's
// (proto/gstrace.proto), checked.
//
// The rings hold small fixed-size records whose enums are the agent's own (the hot path must not
// depend on protobuf code); the writer converts them when it encodes a chunk. Each conversion
// below is a cast, and each enumerator has a static_assert that it has the schema's value, so a
// value added to or moved in either definition fails the build here instead of shifting another
// silently. Adding an enumerator: add it in events.h, in gstrace.proto, and its line below.
#ifndef GPUSTALL_AGENT_WRITER_TRACE_ENUMS_H_
#define GPUSTALL_AGENT_WRITER_TRACE_ENUMS_H_

#include "agent/record/events.h"
#include "proto/gstrace.pb.h"

namespace gs {
namespace trace_enums_internal {

namespace pb = gpustall::trace;

template <typename Ours, typename Theirs>
constexpr bool Same(Ours ours, Theirs theirs) {
  return static_cast<int>(ours) == static_cast<int>(theirs);
}

static_assert(Same(ApiClass::kOther, pb::API_CLASS_OTHER));
static_assert(Same(ApiClass::kLaunch, pb::API_CLASS_LAUNCH));
static_assert(Same(ApiClass::kMemcpy, pb::API_CLASS_MEMCPY));
static_assert(Same(ApiClass::kMemset, pb::API_CLASS_MEMSET));
static_assert(Same(ApiClass::kMalloc, pb::API_CLASS_MALLOC));
static_assert(Same(ApiClass::kFree, pb::API_CLASS_FREE));
static_assert(Same(ApiClass::kHostAlloc, pb::API_CLASS_HOST_ALLOC));
static_assert(Same(ApiClass::kHostFree, pb::API_CLASS_HOST_FREE));
static_assert(Same(ApiClass::kStreamSync, pb::API_CLASS_STREAM_SYNC));
static_assert(Same(ApiClass::kDeviceSync, pb::API_CLASS_DEVICE_SYNC));
static_assert(Same(ApiClass::kEventSync, pb::API_CLASS_EVENT_SYNC));
static_assert(Same(ApiClass::kStreamWaitEvent, pb::API_CLASS_STREAM_WAIT_EVENT));
static_assert(Same(ApiClass::kQuery, pb::API_CLASS_QUERY));
static_assert(Same(ApiClass::kEventRecord, pb::API_CLASS_EVENT_RECORD));
// The schema's last value is the agent's last: a value added to the schema alone fails here.
static_assert(Same(ApiClass::kEventRecord, pb::ApiClass_MAX));

static_assert(Same(ApiSource::kInterposer, pb::API_SOURCE_INTERPOSER));
static_assert(Same(ApiSource::kCuptiCallback, pb::API_SOURCE_CUPTI_CALLBACK));

static_assert(Same(MemKind::kUnknown, pb::MEM_KIND_UNKNOWN));
static_assert(Same(MemKind::kPageable, pb::MEM_KIND_PAGEABLE));
static_assert(Same(MemKind::kPinned, pb::MEM_KIND_PINNED));
static_assert(Same(MemKind::kDevice, pb::MEM_KIND_DEVICE));
static_assert(Same(MemKind::kArray, pb::MEM_KIND_ARRAY));
static_assert(Same(MemKind::kManaged, pb::MEM_KIND_MANAGED));
static_assert(Same(MemKind::kManaged, pb::MemKind_MAX));

static_assert(Same(ActivityKind::kKernel, pb::ACTIVITY_KIND_KERNEL));
static_assert(Same(ActivityKind::kMemcpy, pb::ACTIVITY_KIND_MEMCPY));
static_assert(Same(ActivityKind::kMemset, pb::ACTIVITY_KIND_MEMSET));
static_assert(Same(ActivityKind::kSync, pb::ACTIVITY_KIND_SYNC));
static_assert(Same(ActivityKind::kMemoryAlloc, pb::ACTIVITY_KIND_MEMORY_ALLOC));
static_assert(Same(ActivityKind::kMemoryFree, pb::ACTIVITY_KIND_MEMORY_FREE));
static_assert(Same(ActivityKind::kCollective, pb::ACTIVITY_KIND_COLLECTIVE));
static_assert(Same(ActivityKind::kCollective, pb::ActivityKind_MAX));

static_assert(Same(ActivitySource::kCupti, pb::ACTIVITY_SOURCE_CUPTI));
static_assert(Same(ActivitySource::kEventPair, pb::ACTIVITY_SOURCE_EVENT_PAIR));
static_assert(Same(ActivitySource::kEventPair, pb::ActivitySource_MAX));

}  // namespace trace_enums_internal

inline gpustall::trace::ApiClass ToTrace(ApiClass c) { return static_cast<gpustall::trace::ApiClass>(c); }
inline gpustall::trace::ApiSource ToTrace(ApiSource s) { return static_cast<gpustall::trace::ApiSource>(s); }
inline gpustall::trace::MemKind ToTrace(MemKind k) { return static_cast<gpustall::trace::MemKind>(k); }
inline gpustall::trace::ActivityKind ToTrace(ActivityKind k) {
  return static_cast<gpustall::trace::ActivityKind>(k);
}
inline gpustall::trace::ActivitySource ToTrace(ActivitySource s) {
  return static_cast<gpustall::trace::ActivitySource>(s);
}

}  // namespace gs

#endif  // GPUSTALL_AGENT_WRITER_TRACE_ENUMS_H_
