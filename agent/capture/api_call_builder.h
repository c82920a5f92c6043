// api_call_builder.h — turns one intercepted (or CUPTI-reported) CUDA call into an ApiCallEvent, and
// applies what the call changed to the agent's view of host memory.
//
// Shared by the shim's wrappers and the CUPTI callback path, so that a call carries the same
// fields whichever way it was caught. Pure functions over the arguments plus lock-free reads of the
// HostMemoryMap: safe on the application's hot path.
#ifndef GPUSTALL_AGENT_CAPTURE_API_CALL_BUILDER_H_
#define GPUSTALL_AGENT_CAPTURE_API_CALL_BUILDER_H_

#include "agent/capture/host_memory_map.h"
#include "agent/record/events.h"
#include "agent/capture/cuda_api/cuda_api.h"

namespace gs {

// Host/device memory kinds of a copy's source and destination. Host sides are looked up in `map`
// (pinned or managed if known, else pageable); with cudaMemcpyDefault (unified addressing) a
// pointer the map does not know is kUnknown, since it may be device memory.
void ClassifyCopy(int copy_kind, const void* dst, const void* src, const HostMemoryMap& map,
                  MemKind* dst_kind, MemKind* src_kind);

// Fills every field of `event` from the table row (cuda_api.def's or cuda_driver_api.def's) and
// facts, except enter_ns/exit_ns/correlation_id (the caller's) and source (set to `source`).
// `api_id` is what the trace names the call by: the table index for the interposer, the CUPTI
// cbid for callbacks.
void BuildApiCallEvent(const CudaApiInfo& info, const CudaCallFacts& facts, int result, int device,
                       ApiSource source, uint16_t api_id, const HostMemoryMap& map,
                       ApiCallEvent* event);
inline void BuildApiCallEvent(CudaApi api, const CudaCallFacts& facts, int result, int device,
                              ApiSource source, uint16_t api_id, const HostMemoryMap& map,
                              ApiCallEvent* event) {
  BuildApiCallEvent(InfoOf(api), facts, result, device, source, api_id, map, event);
}

// Applies the call's CudaApiEffect (pinned/managed ranges, current device) after it returned.
// Only successful calls change anything. Inline for the calls that change nothing (most of them:
// the wrappers and the CUPTI callback pay no out-of-line call for those). kSetDevice reads
// `params` as cudaSetDevice's.
void ApplyCallEffectSlow(const CudaApiInfo& info, const CudaCallFacts& facts, const void* params,
                         HostMemoryMap& map);
inline void ApplyCallEffect(const CudaApiInfo& info, const CudaCallFacts& facts, bool ok,
                            const void* params, HostMemoryMap& map) {
  if (ok && info.effect != CudaApiEffect::kNone) ApplyCallEffectSlow(info, facts, params, map);
}
inline void ApplyCallEffect(CudaApi api, const CudaCallFacts& facts, bool ok, const void* params,
                            HostMemoryMap& map) {
  ApplyCallEffect(InfoOf(api), facts, ok, params, map);
}

}  // namespace gs

#endif  // GPUSTALL_AGENT_CAPTURE_API_CALL_BUILDER_H_
