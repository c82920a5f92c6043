// cuptiFinalize: detach from the process. Buffers are flushed (forced) and handed back, activity
// kinds are disabled, the subscriber is dropped and the driver hooks are removed. Any later CUPTI
// call attaches again, as real CUPTI's lazy initialisation does.
//
// Real CUPTI recommends calling it from an API_EXIT callback; that works here as long as the
// driver allows simgpuDriverSetToolHooks(NULL) from inside a hook.
#include <cupti.h>

#include "activity_buffers.h"
#include "activity_records.h"
#include "callback_api.h"
#include "driver_attachment.h"

extern "C" CUptiResult CUPTIAPI cuptiFinalize(void) {
  simgpu_cupti::DisableAllKinds();
  simgpu_cupti::DropSubscriber();
  simgpu_cupti::DetachFromDriver();
  simgpu_cupti::FinalizeBuffers();
  return CUPTI_SUCCESS;
}
