// cuptiGetContextId / cuptiGetDeviceId / cuptiGetStreamId(Ex).
//
// The driver answers them through the optional queries of tool_hooks.h. Those are weak
// references, so this library still loads with a driver that lacks them; then contexts and
// devices are answered from what the hooks have shown since attaching (a context's uid from the
// API callbacks, its device from the operation records), and streams are not supported
// (CUPTI_ERROR_NOT_SUPPORTED): nothing the hooks carry ties a stream handle to its id.
#include <cupti.h>

#include "activity_records.h"
#include "callback_api.h"
#include "tool_hooks.h"

#pragma weak simgpuDriverContextInfo
#pragma weak simgpuDriverStreamId

namespace simgpu_cupti {
namespace {

bool ContextInfo(void* context, uint32_t* context_id, uint32_t* device_id) {
  if (simgpuDriverContextInfo != nullptr) {
    return simgpuDriverContextInfo(context, context_id, device_id) == 0;
  }
  if (context == nullptr) context = LastContextOfThisThread();
  return context != nullptr && LookupContextUid(context, context_id) &&
         DeviceOfContext(*context_id, device_id);
}

}  // namespace
}  // namespace simgpu_cupti

extern "C" {

CUptiResult CUPTIAPI cuptiGetContextId(CUcontext context, uint32_t* contextId) {
  if (contextId == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  if (context == nullptr) return CUPTI_ERROR_INVALID_CONTEXT;
  if (simgpuDriverContextInfo != nullptr) {
    uint32_t device_id = 0;
    return simgpuDriverContextInfo(context, contextId, &device_id) == 0 ? CUPTI_SUCCESS
                                                                        : CUPTI_ERROR_INVALID_CONTEXT;
  }
  return simgpu_cupti::LookupContextUid(context, contextId) ? CUPTI_SUCCESS
                                                           : CUPTI_ERROR_INVALID_CONTEXT;
}

CUptiResult CUPTIAPI cuptiGetDeviceId(CUcontext context, uint32_t* deviceId) {
  if (deviceId == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  uint32_t context_id = 0;
  return simgpu_cupti::ContextInfo(context, &context_id, deviceId) ? CUPTI_SUCCESS
                                                                   : CUPTI_ERROR_INVALID_DEVICE;
}

CUptiResult CUPTIAPI cuptiGetStreamIdEx(CUcontext context, CUstream stream, uint8_t perThreadStream,
                                        uint32_t* streamId) {
  if (streamId == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  if (simgpuDriverStreamId == nullptr) return CUPTI_ERROR_NOT_SUPPORTED;
  if (simgpuDriverStreamId(context, stream, perThreadStream, streamId) != 0) {
    return CUPTI_ERROR_INVALID_STREAM;
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetStreamId(CUcontext context, CUstream stream, uint32_t* streamId) {
  return cuptiGetStreamIdEx(context, stream, 0, streamId);
}



// Graph and node ids: what the graph node events showed (callback_api.h). A handle no event has
// shown yet is answered as invalid.
CUptiResult CUPTIAPI cuptiGetGraphNodeId(CUgraphNode node, uint64_t* nodeId) {
  if (node == nullptr || nodeId == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  return simgpu_cupti::LookupGraphNodeId(node, nodeId) ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult CUPTIAPI cuptiGetGraphId(CUgraph graph, uint32_t* pId) {
  if (graph == nullptr || pId == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  return simgpu_cupti::LookupGraphId(graph, pId) ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

}  // extern "C"
