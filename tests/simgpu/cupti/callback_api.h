// callback_api.h — CUPTI's callback API: the single subscriber, its enabled (domain, cbid) set,
// and the dispatch of what simgpu's driver reports as real CUpti_CallbackData /
// CUpti_ResourceData / CUpti_SynchronizeData callbacks.
//
// What fires (only for callbacks the subscriber enabled):
//   RUNTIME_API   API_ENTER and API_EXIT of every runtime call, with the driver's cbid,
//                 functionName, functionParams, return value (EXIT), symbolName (launches),
//                 context, contextUid, correlationId and one correlationData slot per call.
//   DRIVER_API    the same, for driver calls simgpu reports (none at present).
//   RESOURCE      CONTEXT_CREATED in the first call that uses a context after attaching,
//                 STREAM_CREATED after cudaStreamCreate*, STREAM_DESTROY_STARTING in
//                 cudaStreamDestroy — from inside the call, as real CUPTI does.
//                 GRAPHNODE_CREATED / GRAPHNODE_CLONED from inside the call that made the node
//                 (a capturing launch; cudaGraphInstantiate), resourceDescriptor a CUpti_GraphData.
//   SYNCHRONIZE   STREAM_SYNCHRONIZED after cudaStreamSynchronize(_ptsz) succeeds,
//                 CONTEXT_SYNCHRONIZED after cudaDeviceSynchronize/cudaThreadSynchronize.
//   NVTX, STATE   may be enabled; simgpu never reports these.
//
// Thread safety: the entry points are thread-safe; as documented for real CUPTI, the subscriber
// must serialise its own Enable*/GetCallbackState calls. Callbacks run on the application thread
// making the call. A subscriber handle stays valid memory forever (stale handles are rejected).
#ifndef GPUSTALL_TESTS_SIMGPU_CUPTI_CALLBACK_API_H_
#define GPUSTALL_TESTS_SIMGPU_CUPTI_CALLBACK_API_H_

#include <cupti.h>

#include "tool_hooks.h"

namespace simgpu_cupti {

// The driver's on_api hook.
void DispatchApiCallback(const SimgpuApiCallback& cb);

// The driver's on_graph_node hook: remembers the node's and graph's ids (cuptiGetGraphNodeId,
// cuptiGetGraphId) and fires the resource callback.
void DispatchGraphNodeEvent(const SimgpuGraphNodeEvent& ev);
// Ids of handles that graph node events have shown; false for others.
bool LookupGraphNodeId(const void* node, uint64_t* id);
bool LookupGraphId(const void* graph, uint32_t* id);

// cuptiFinalize: forgets the subscriber (its handle becomes invalid).
void DropSubscriber();

// What the API callbacks have shown since attaching (for cuptiGetContextId/GetDeviceId when the
// driver does not answer them): a context's uid, and the calling thread's last context.
bool LookupContextUid(void* context, uint32_t* uid);
void* LastContextOfThisThread();

}  // namespace simgpu_cupti

#endif  // GPUSTALL_TESTS_SIMGPU_CUPTI_CALLBACK_API_H_
