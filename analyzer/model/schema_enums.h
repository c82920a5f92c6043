// schema_enums.h — the model's enums from the trace schema's (proto/gstrace.proto).
//
// The model keeps enums of its own (types.h: small, scoped, no protobuf in the analysis' headers)
// with the schema's values, so a conversion is a cast. What ties the two together is here, one
// list per enum (proto/enum_tie.h): each enumerator has the schema's value, and a value added to,
// removed from or renumbered in either enum alone stops the build instead of silently shifting
// another. Convert only through these functions.
#ifndef GPUSTALL_ANALYZER_MODEL_SCHEMA_ENUMS_H_
#define GPUSTALL_ANALYZER_MODEL_SCHEMA_ENUMS_H_

#include "analyzer/model/types.h"
#include "proto/enum_tie.h"
#include "proto/records.h"

namespace gs::analyzer {

namespace schema_enums_internal {
namespace tr = gpustall::trace;
#define GS_MODEL_API_CLASSES(PAIR, SCHEMA_ONLY)                     \
  PAIR(ApiClass::kOther, tr::API_CLASS_OTHER)                       \
  PAIR(ApiClass::kLaunch, tr::API_CLASS_LAUNCH)                     \
  PAIR(ApiClass::kMemcpy, tr::API_CLASS_MEMCPY)                     \
  PAIR(ApiClass::kMemset, tr::API_CLASS_MEMSET)                     \
  PAIR(ApiClass::kMalloc, tr::API_CLASS_MALLOC)                     \
  PAIR(ApiClass::kFree, tr::API_CLASS_FREE)                         \
  PAIR(ApiClass::kHostAlloc, tr::API_CLASS_HOST_ALLOC)              \
  PAIR(ApiClass::kHostFree, tr::API_CLASS_HOST_FREE)                \
  PAIR(ApiClass::kStreamSync, tr::API_CLASS_STREAM_SYNC)            \
  PAIR(ApiClass::kDeviceSync, tr::API_CLASS_DEVICE_SYNC)            \
  PAIR(ApiClass::kEventSync, tr::API_CLASS_EVENT_SYNC)              \
  PAIR(ApiClass::kStreamWaitEvent, tr::API_CLASS_STREAM_WAIT_EVENT) \
  PAIR(ApiClass::kQuery, tr::API_CLASS_QUERY)                       \
  PAIR(ApiClass::kEventRecord, tr::API_CLASS_EVENT_RECORD)

#define GS_MODEL_MEM_KINDS(PAIR, SCHEMA_ONLY)      \
  PAIR(MemKind::kUnknown, tr::MEM_KIND_UNKNOWN)    \
  PAIR(MemKind::kPageable, tr::MEM_KIND_PAGEABLE)  \
  PAIR(MemKind::kPinned, tr::MEM_KIND_PINNED)      \
  PAIR(MemKind::kDevice, tr::MEM_KIND_DEVICE)      \
  PAIR(MemKind::kArray, tr::MEM_KIND_ARRAY)        \
  PAIR(MemKind::kManaged, tr::MEM_KIND_MANAGED)

#define GS_MODEL_ACTIVITY_KINDS(PAIR, SCHEMA_ONLY)                  \
  PAIR(ActivityKind::kUnspecified, tr::ACTIVITY_KIND_UNSPECIFIED)   \
  PAIR(ActivityKind::kKernel, tr::ACTIVITY_KIND_KERNEL)             \
  PAIR(ActivityKind::kMemcpy, tr::ACTIVITY_KIND_MEMCPY)             \
  PAIR(ActivityKind::kMemset, tr::ACTIVITY_KIND_MEMSET)             \
  PAIR(ActivityKind::kSync, tr::ACTIVITY_KIND_SYNC)                 \
  PAIR(ActivityKind::kMemoryAlloc, tr::ACTIVITY_KIND_MEMORY_ALLOC)  \
  PAIR(ActivityKind::kMemoryFree, tr::ACTIVITY_KIND_MEMORY_FREE)    \
  PAIR(ActivityKind::kCollective, tr::ACTIVITY_KIND_COLLECTIVE)

#define GS_MODEL_MEMORY_EVENT_KINDS(PAIR, SCHEMA_ONLY)                \
  PAIR(MemoryEventKind::kUnspecified, tr::MEMORY_EVENT_UNSPECIFIED)   \
  PAIR(MemoryEventKind::kAlloc, tr::MEMORY_EVENT_ALLOC)               \
  PAIR(MemoryEventKind::kFree, tr::MEMORY_EVENT_FREE)                 \
  PAIR(MemoryEventKind::kUsage, tr::MEMORY_EVENT_USAGE)               \
  PAIR(MemoryEventKind::kReserved, tr::MEMORY_EVENT_RESERVED)         \
  PAIR(MemoryEventKind::kOom, tr::MEMORY_EVENT_OOM)

// A missing case in a Tied() switch (an enumerator on one side only) is an error, not a warning.
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"
GS_ENUM_TIE(ApiClass, tr, ApiClass, GS_MODEL_API_CLASSES)
GS_ENUM_TIE(MemKind, tr, MemKind, GS_MODEL_MEM_KINDS)
GS_ENUM_TIE(ActivityKind, tr, ActivityKind, GS_MODEL_ACTIVITY_KINDS)
GS_ENUM_TIE(MemoryEventKind, tr, MemoryEventKind, GS_MODEL_MEMORY_EVENT_KINDS)
#pragma GCC diagnostic pop

#undef GS_MODEL_API_CLASSES
#undef GS_MODEL_MEM_KINDS
#undef GS_MODEL_ACTIVITY_KINDS
#undef GS_MODEL_MEMORY_EVENT_KINDS
}  // namespace schema_enums_internal

// A value the model does not know (a newer or damaged trace) is passed through as its number,
// as the schema's own enums do; the analysis treats unknown values as "other".
inline ApiClass FromSchema(gpustall::trace::ApiClass c) { return static_cast<ApiClass>(c); }
inline MemKind FromSchema(gpustall::trace::MemKind k) { return static_cast<MemKind>(k); }
inline ActivityKind FromSchema(gpustall::trace::ActivityKind k) { return static_cast<ActivityKind>(k); }
inline MemoryEventKind FromSchema(gpustall::trace::MemoryEventKind k) { return static_cast<MemoryEventKind>(k); }

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_MODEL_SCHEMA_ENUMS_H_
