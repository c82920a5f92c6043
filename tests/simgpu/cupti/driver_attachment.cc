#include "driver_attachment.h"

#include <mutex>

#include "activity_records.h"
#include "callback_api.h"
#include "tool_hooks.h"

namespace simgpu_cupti {
namespace {

void OnApi(const SimgpuApiCallback* cb) { DispatchApiCallback(*cb); }
void OnApiRecord(const SimgpuApiRecord* rec) { RecordApi(*rec); }
void OnOp(const SimgpuOpRecord* op) { RecordOp(*op); }
void OnGraphNode(const SimgpuGraphNodeEvent* ev) { DispatchGraphNodeEvent(*ev); }

const SimgpuToolHooks kHooks = {OnApi, OnApiRecord, OnOp, OnGraphNode};

std::mutex g_mu;
bool g_attached = false;

}  // namespace

void AttachToDriver() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_attached) return;
  simgpuDriverSetToolHooks(&kHooks);
  g_attached = true;
}

void DetachFromDriver() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_attached) return;
  simgpuDriverSetToolHooks(nullptr);
  g_attached = false;
}

}  // namespace simgpu_cupti
