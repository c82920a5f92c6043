// api_call_builder.cc
#include "agent/capture/api_call_builder.h"

#include "agent/capture/stream_capture.h"

#include "agent/capture/capture_thread_state.h"

namespace gs {
namespace {

MemKind HostKind(const void* p, const HostMemoryMap& map) {
  const MemKind k = map.Lookup(reinterpret_cast<uintptr_t>(p));
  return k == MemKind::kUnknown ? MemKind::kPageable : k;
}

}  // namespace

void ClassifyCopy(int copy_kind, const void* dst, const void* src, const HostMemoryMap& map,
                  MemKind* dst_kind, MemKind* src_kind) {
  switch (copy_kind) {
    case cudaMemcpyHostToHost:
      *src_kind = HostKind(src, map);
      *dst_kind = HostKind(dst, map);
      return;
    case cudaMemcpyHostToDevice:
      *src_kind = HostKind(src, map);
      *dst_kind = MemKind::kDevice;
      return;
    case cudaMemcpyDeviceToHost:
      *src_kind = MemKind::kDevice;
      *dst_kind = HostKind(dst, map);
      return;
    case cudaMemcpyDeviceToDevice:
      *src_kind = MemKind::kDevice;
      *dst_kind = MemKind::kDevice;
      return;
    case cudaMemcpyDefault:
      *src_kind = map.Lookup(reinterpret_cast<uintptr_t>(src));
      *dst_kind = map.Lookup(reinterpret_cast<uintptr_t>(dst));
      return;
    default:
      *src_kind = MemKind::kUnknown;
      *dst_kind = MemKind::kUnknown;
  }
}

void BuildApiCallEvent(const CudaApiInfo& info, const CudaCallFacts& facts, int result, int device,
                       ApiSource source, uint16_t api_id, const HostMemoryMap& map,
                       ApiCallEvent* event) {
  event->bytes = facts.bytes;
  event->stream = facts.stream;
  event->address = facts.address;
  event->api_id = api_id;
  event->result = static_cast<int16_t>(result);
  event->source = source;
  event->api_class = info.api_class;
  event->flags = info.flags;
  event->device = static_cast<uint16_t>(device);
  if (facts.copy_kind != kNotACopy) {
    event->copy_kind = static_cast<uint8_t>(facts.copy_kind);
    ClassifyCopy(facts.copy_kind, facts.dst, facts.src, map, &event->dst_kind, &event->src_kind);
  } else {
    event->copy_kind = 0;
    event->src_kind = MemKind::kUnknown;
    event->dst_kind = MemKind::kUnknown;
  }
}

void ApplyCallEffectSlow(const CudaApiInfo& info, const CudaCallFacts& facts, const void* params,
                         HostMemoryMap& map) {
  switch (info.effect) {
    case CudaApiEffect::kNone:
      return;
    case CudaApiEffect::kAddPinned:
      map.Add(facts.address, facts.bytes, MemKind::kPinned);
      return;
    case CudaApiEffect::kAddManaged:
      map.Add(facts.address, facts.bytes, MemKind::kManaged);
      return;
    case CudaApiEffect::kRemoveHost:
      map.Remove(facts.address);
      return;
    case CudaApiEffect::kRemoveManaged:
      // cudaFree is frequent (allocator churn) and rarely frees managed memory: a lock-free check
      // first keeps the common case off the writer lock.
      if (map.ContainsStart(facts.address)) map.Remove(facts.address);
      return;
    case CudaApiEffect::kBeginCapture:
      NoteStreamCaptureBegun();
      return;
    case CudaApiEffect::kSetDevice:
      if (params != nullptr) {
        ThisThreadCaptureState().device = static_cast<const cudaSetDevice_v3020_params*>(params)->device;
      }
      return;
  }
}

}  // namespace gs
