// schema_enums.h — the model's enums from the trace schema's (proto/gstrace.proto).
//
// The model keeps enums of its own (types.h: small, scoped, no protobuf in the analysis' headers)
// with the schema's values, so a conversion is a cast. What ties the two together is here: one
// static_assert per enumerator and one on the schema's largest value, so that a value added to,
// removed from or renumbered in either enum stops the build instead of silently shifting another.
// Convert only through these functions.
#ifndef GPUSTALL_ANALYZER_MODEL_SCHEMA_ENUMS_H_
#define GPUSTALL_ANALYZER_MODEL_SCHEMA_ENUMS_H_

#include "analyzer/model/types.h"
#include "proto/records.h"

namespace gs::analyzer {

namespace schema_enums_internal {
namespace tr = gpustall::trace;
template <typename Model, typename Schema>
constexpr bool Same(Model m, Schema s) {
  return static_cast<int>(m) == static_cast<int>(s);
}

static_assert(Same(ApiClass::kOther, tr::API_CLASS_OTHER));
static_assert(Same(ApiClass::kLaunch, tr::API_CLASS_LAUNCH));
static_assert(Same(ApiClass::kMemcpy, tr::API_CLASS_MEMCPY));
static_assert(Same(ApiClass::kMemset, tr::API_CLASS_MEMSET));
static_assert(Same(ApiClass::kMalloc, tr::API_CLASS_MALLOC));
static_assert(Same(ApiClass::kFree, tr::API_CLASS_FREE));
static_assert(Same(ApiClass::kHostAlloc, tr::API_CLASS_HOST_ALLOC));
static_assert(Same(ApiClass::kHostFree, tr::API_CLASS_HOST_FREE));
static_assert(Same(ApiClass::kStreamSync, tr::API_CLASS_STREAM_SYNC));
static_assert(Same(ApiClass::kDeviceSync, tr::API_CLASS_DEVICE_SYNC));
static_assert(Same(ApiClass::kEventSync, tr::API_CLASS_EVENT_SYNC));
static_assert(Same(ApiClass::kStreamWaitEvent, tr::API_CLASS_STREAM_WAIT_EVENT));
static_assert(Same(ApiClass::kQuery, tr::API_CLASS_QUERY));
static_assert(Same(ApiClass::kEventRecord, tr::API_CLASS_EVENT_RECORD));
static_assert(tr::ApiClass_MAX == tr::API_CLASS_EVENT_RECORD, "a new ApiClass: add it to types.h and here");

static_assert(Same(MemKind::kUnknown, tr::MEM_KIND_UNKNOWN));
static_assert(Same(MemKind::kPageable, tr::MEM_KIND_PAGEABLE));
static_assert(Same(MemKind::kPinned, tr::MEM_KIND_PINNED));
static_assert(Same(MemKind::kDevice, tr::MEM_KIND_DEVICE));
static_assert(Same(MemKind::kArray, tr::MEM_KIND_ARRAY));
static_assert(Same(MemKind::kManaged, tr::MEM_KIND_MANAGED));
static_assert(tr::MemKind_MAX == tr::MEM_KIND_MANAGED, "a new MemKind: add it to types.h and here");

static_assert(Same(ActivityKind::kUnspecified, tr::ACTIVITY_KIND_UNSPECIFIED));
static_assert(Same(ActivityKind::kKernel, tr::ACTIVITY_KIND_KERNEL));
static_assert(Same(ActivityKind::kMemcpy, tr::ACTIVITY_KIND_MEMCPY));
static_assert(Same(ActivityKind::kMemset, tr::ACTIVITY_KIND_MEMSET));
static_assert(Same(ActivityKind::kSync, tr::ACTIVITY_KIND_SYNC));
static_assert(Same(ActivityKind::kMemoryAlloc, tr::ACTIVITY_KIND_MEMORY_ALLOC));
static_assert(Same(ActivityKind::kMemoryFree, tr::ACTIVITY_KIND_MEMORY_FREE));
static_assert(Same(ActivityKind::kCollective, tr::ACTIVITY_KIND_COLLECTIVE));
static_assert(tr::ActivityKind_MAX == tr::ACTIVITY_KIND_COLLECTIVE, "a new ActivityKind: add it to types.h and here");

static_assert(Same(MemoryEventKind::kUnspecified, tr::MEMORY_EVENT_UNSPECIFIED));
static_assert(Same(MemoryEventKind::kAlloc, tr::MEMORY_EVENT_ALLOC));
static_assert(Same(MemoryEventKind::kFree, tr::MEMORY_EVENT_FREE));
static_assert(Same(MemoryEventKind::kUsage, tr::MEMORY_EVENT_USAGE));
static_assert(Same(MemoryEventKind::kReserved, tr::MEMORY_EVENT_RESERVED));
static_assert(Same(MemoryEventKind::kOom, tr::MEMORY_EVENT_OOM));
static_assert(tr::MemoryEventKind_MAX == tr::MEMORY_EVENT_OOM, "a new MemoryEventKind: add it to types.h and here");
}  // namespace schema_enums_internal

// A value the model does not know (a newer or damaged trace) is passed through as its number,
// as the schema's own enums do; the analysis treats unknown values as "other".
inline ApiClass FromSchema(gpustall::trace::ApiClass c) { return static_cast<ApiClass>(c); }
inline MemKind FromSchema(gpustall::trace::MemKind k) { return static_cast<MemKind>(k); }
inline ActivityKind FromSchema(gpustall::trace::ActivityKind k) { return static_cast<ActivityKind>(k); }
inline MemoryEventKind FromSchema(gpustall::trace::MemoryEventKind k) { return static_cast<MemoryEventKind>(k); }

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_MODEL_SCHEMA_ENUMS_H_
