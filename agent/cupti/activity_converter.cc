// activity_converter.cc
#include "agent/cupti/activity_converter.h"

#include <cstddef>
#include <cstring>

#include "agent/cupti/activity_layouts.h"

namespace gs {
namespace {

// Read layouts. The loaded libcupti decides each record's layout (CUDA 12.x hands out Kernel9,
// Memcpy5 until 12.6 and Memcpy6 from 12.8, Synchronization until 12.6 and Synchronization2 from
// 12.8, Memory3 until 12.5 and Memory4 from 12.6; 13.0 Kernel10, Memcpy6, Synchronization2,
// Memory4: agent/cupti/NOTES.md §9). Each newer layout only appends fields or
// turns padding into fields, so every kind is read through its oldest layout that has all the
// fields read here: those lie at the same offsets in every version from 12.0 to 13.0, and nothing
// is read from a newer version's fields (which are padding or another record on 12.x).
// cuptiActivityGetNextRecord, the library's own, steps over each record's true size. The layouts
// are named in activity_layouts.h, with the fields read.
using namespace cupti_layouts;  // NOLINT(build/namespaces): the record aliases, in this file only

// Every field read lies where the CUDA 13.0 layout has it (the 12.x header sets: the layout
// test, agent/cupti/layout/).
#define GS_SAME_OFFSET(READ, NEW, FIELD) \
  static_assert(offsetof(READ, FIELD) == offsetof(NEW, FIELD), #READ "." #FIELD " moved in " #NEW);
GS_CUPTI_READ_FIELDS(GS_SAME_OFFSET)
#undef GS_SAME_OFFSET

void Clear(GpuActivityEvent* out) { std::memset(out, 0, sizeof(*out)); }

MemKind ToMemKind(uint32_t cupti_memory_kind) {
  return cupti_memory_kind <= static_cast<uint32_t>(MemKind::kManaged)
             ? static_cast<MemKind>(cupti_memory_kind)
             : MemKind::kUnknown;
}

}  // namespace

void ActivityConverter::LearnContext(uint32_t context_id, uint32_t device_id) {
  for (int i = 0; i < contexts_; ++i) {
    if (context_ids_[i] == context_id) {
      context_devices_[i] = device_id;
      return;
    }
  }
  if (contexts_ < kMaxContexts) {
    context_ids_[contexts_] = context_id;
    context_devices_[contexts_] = device_id;
    ++contexts_;
  }
}

uint32_t ActivityConverter::DeviceOfContext(uint32_t context_id) const {
  for (int i = 0; i < contexts_; ++i) {
    if (context_ids_[i] == context_id) return context_devices_[i];
  }
  return 0;  // unknown: most processes use one device, and device 0 first
}

bool ActivityConverter::Convert(const CUpti_Activity* record, GpuActivityEvent* out) {
  Clear(out);
  out->source = ActivitySource::kCupti;
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const KernelRecord*>(record);
      out->kind = ActivityKind::kKernel;
      out->start_ns = k->start;
      out->end_ns = k->end;
      out->correlation_id = k->correlationId;
      out->device = k->deviceId;
      out->stream_id = k->streamId;
      out->context_id = k->contextId;
      out->graph_node_id = k->graphNodeId;
      out->name = k->name;
      out->grid[0] = static_cast<uint32_t>(k->gridX);
      out->grid[1] = static_cast<uint32_t>(k->gridY);
      out->grid[2] = static_cast<uint32_t>(k->gridZ);
      out->block[0] = static_cast<uint32_t>(k->blockX);
      out->block[1] = static_cast<uint32_t>(k->blockY);
      out->block[2] = static_cast<uint32_t>(k->blockZ);
      out->registers_per_thread = k->registersPerThread;
      out->static_shared_bytes = static_cast<uint32_t>(k->staticSharedMemory);
      out->dynamic_shared_bytes = static_cast<uint32_t>(k->dynamicSharedMemory);
      out->launch_flags = kLaunchConfigKnown | kLaunchResourcesKnown;
      LearnContext(k->contextId, k->deviceId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const MemcpyRecord*>(record);
      out->kind = ActivityKind::kMemcpy;
      out->start_ns = m->start;
      out->end_ns = m->end;
      out->bytes = m->bytes;
      out->correlation_id = m->correlationId;
      out->graph_node_id = m->graphNodeId;
      out->device = m->deviceId;
      out->stream_id = m->streamId;
      out->context_id = m->contextId;
      out->copy_kind = m->copyKind;
      out->src_kind = ToMemKind(m->srcKind);
      out->dst_kind = ToMemKind(m->dstKind);
      out->flags = m->flags;
      LearnContext(m->contextId, m->deviceId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const auto* m = reinterpret_cast<const PeerCopyRecord*>(record);
      out->kind = ActivityKind::kMemcpy;
      out->start_ns = m->start;
      out->end_ns = m->end;
      out->bytes = m->bytes;
      out->correlation_id = m->correlationId;
      out->device = m->deviceId;
      out->stream_id = m->streamId;
      out->context_id = m->contextId;
      out->copy_kind = m->copyKind;
      out->src_kind = ToMemKind(m->srcKind);
      out->dst_kind = ToMemKind(m->dstKind);
      out->flags = m->flags;
      LearnContext(m->contextId, m->deviceId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const MemsetRecord*>(record);
      out->kind = ActivityKind::kMemset;
      out->start_ns = m->start;
      out->end_ns = m->end;
      out->bytes = m->bytes;
      out->correlation_id = m->correlationId;
      out->graph_node_id = m->graphNodeId;
      out->device = m->deviceId;
      out->stream_id = m->streamId;
      out->context_id = m->contextId;
      out->dst_kind = ToMemKind(m->memoryKind);
      out->flags = static_cast<uint8_t>(m->flags);
      LearnContext(m->contextId, m->deviceId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* s = reinterpret_cast<const SyncRecord*>(record);
      out->kind = ActivityKind::kSync;
      out->start_ns = s->start;
      out->end_ns = s->end;
      out->correlation_id = s->correlationId;
      out->context_id = s->contextId;
      out->device = DeviceOfContext(s->contextId);
      out->stream_id = s->streamId;
      out->sync_type = static_cast<uint32_t>(s->type);
      out->address = s->cudaEventId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? 0 : s->cudaEventId;
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
      const auto* m = reinterpret_cast<const MemoryRecord*>(record);
      out->kind = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE
                      ? ActivityKind::kMemoryFree
                      : ActivityKind::kMemoryAlloc;
      out->start_ns = m->timestamp;
      out->end_ns = m->timestamp;
      out->bytes = m->bytes;
      out->address = m->address;
      out->correlation_id = m->correlationId;
      out->device = m->deviceId;
      out->stream_id = m->streamId;
      out->context_id = m->contextId;
      out->dst_kind = ToMemKind(m->memoryKind);
      LearnContext(m->contextId, m->deviceId);
      // A memory record has one timestamp; do not count it as missing one.
      return true;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      ++overhead_records_;
      return false;
    default:
      return false;
  }
  if (out->start_ns == 0 && out->end_ns == 0) ++records_without_timestamps_;
  return true;
}

}  // namespace gs
