// cupti.h (through callback_api.h) brings the runtime API and its <api>_params structs in.
#include "callback_api.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <string>
#include <vector>

#include "driver_attachment.h"
#include "injected_faults.h"

// The handle type is opaque in cupti_callbacks.h; this library gives it its body.
struct CUpti_Subscriber_st {
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  std::string name;  // as CUPTI reports it to a later subscriber: "CUPTI for <name>"
  // One enable flag per (domain, cbid). Atomic because callbacks read them on other threads.
  std::unique_ptr<std::atomic<bool>[]> enabled[CUPTI_CB_DOMAIN_SIZE];
  CUpti_Subscriber_st* retired_next = nullptr;  // on g_retired once unsubscribed
};

namespace simgpu_cupti {
namespace {

uint32_t DomainSize(int domain) {
  switch (domain) {
    case CUPTI_CB_DOMAIN_DRIVER_API: return CUPTI_DRIVER_TRACE_CBID_SIZE;
    case CUPTI_CB_DOMAIN_RUNTIME_API: return CUPTI_RUNTIME_TRACE_CBID_SIZE;
    case CUPTI_CB_DOMAIN_RESOURCE: return CUPTI_CBID_RESOURCE_SIZE;
    case CUPTI_CB_DOMAIN_SYNCHRONIZE: return CUPTI_CBID_SYNCHRONIZE_SIZE;
    case CUPTI_CB_DOMAIN_NVTX: return CUPTI_CBID_NVTX_SIZE;
    case CUPTI_CB_DOMAIN_STATE: return CUPTI_CBID_STATE_SIZE;
    default: return 0;
  }
}

std::mutex g_subscribe_mu;
std::atomic<CUpti_Subscriber_st*> g_current{nullptr};
CUpti_Subscriber_st* g_retired = nullptr;  // unsubscribed ones, newest first (g_subscribe_mu)

bool IsCurrent(CUpti_SubscriberHandle s) {
  return s != nullptr && s == g_current.load(std::memory_order_acquire);
}

void WriteOldName(CUpti_SubscriberParams* params, const char* name) {
  if (params == nullptr || params->oldSubscriberName == nullptr || params->oldSubscriberSize == 0) {
    return;
  }
  std::snprintf(params->oldSubscriberName, params->oldSubscriberSize, "%s", name);
}

CUptiResult Subscribe(CUpti_SubscriberHandle* out, CUpti_CallbackFunc callback, void* userdata,
                      CUpti_SubscriberParams* params) {
  if (params != nullptr && params->structSize == 0) return CUPTI_ERROR_INVALID_PARAMETER;
  const bool has_names = params != nullptr &&
                         params->structSize >= CUpti_SubscriberParams_STRUCT_SIZE;
  CUpti_SubscriberParams* named = has_names ? params : nullptr;
  if (CUptiResult failure = InjectedFailure(FaultSite::kSubscribe); failure != CUPTI_SUCCESS) {
    const char* other = Faults().other_subscriber;
    WriteOldName(named, failure == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? other : "");
    return failure;
  }
  if (out == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard<std::mutex> lock(g_subscribe_mu);
  if (CUpti_Subscriber_st* existing = g_current.load(std::memory_order_acquire)) {
    WriteOldName(named, existing->name.c_str());
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  // Never freed: a callback racing with cuptiUnsubscribe may still read it (g_retired keeps it).
  auto* s = new CUpti_Subscriber_st;
  s->callback = callback;
  s->userdata = userdata;
  s->name = "CUPTI";
  if (named != nullptr && named->subscriberName != nullptr) {
    s->name += " for ";
    s->name.append(named->subscriberName,
                   strnlen(named->subscriberName, CUPTI_SUBSCRIBER_NAME_MAX_LEN));
  }
  for (int d = 0; d < CUPTI_CB_DOMAIN_SIZE; ++d) {
    uint32_t n = DomainSize(d);
    if (n == 0) continue;
    s->enabled[d].reset(new std::atomic<bool>[n]);
    for (uint32_t i = 0; i < n; ++i) s->enabled[d][i].store(false, std::memory_order_relaxed);
  }
  AttachToDriver();
  g_current.store(s, std::memory_order_release);
  *out = s;
  return CUPTI_SUCCESS;
}

bool Enabled(const CUpti_Subscriber_st* s, CUpti_CallbackDomain domain, uint32_t cbid) {
  return cbid < DomainSize(domain) && s->enabled[domain][cbid].load(std::memory_order_relaxed);
}

void Fire(CUpti_Subscriber_st* s, CUpti_CallbackDomain domain, uint32_t cbid, const void* data) {
  if (s->callback != nullptr && Enabled(s, domain, cbid)) s->callback(s->userdata, domain, cbid, data);
}

// Contexts already announced. simgpu's runtime binds its context before the first API_ENTER, so
// the first call that shows a context after attaching is where CUPTI would have seen it created;
// CONTEXT_CREATED is raised there, before that call's API_EXIT callback.
struct KnownContext {
  void* handle;
  uint32_t uid;
};
std::mutex g_contexts_mu;
std::vector<KnownContext>& KnownContexts() {
  static auto* known = new std::vector<KnownContext>;  // leaked: read until the process ends
  return *known;
}
thread_local void* t_last_context = nullptr;         // fast path: most calls repeat the context
thread_local void* t_context_created_pending = nullptr;

void NoteContext(void* context, uint32_t uid) {
  if (context == nullptr || context == t_last_context) return;
  t_last_context = context;
  std::lock_guard<std::mutex> lock(g_contexts_mu);
  auto& known = KnownContexts();
  auto same = [context](const KnownContext& k) { return k.handle == context; };
  if (std::find_if(known.begin(), known.end(), same) != known.end()) return;
  known.push_back({context, uid});
  t_context_created_pending = context;
}

bool Succeeded(const SimgpuApiCallback& cb) {
  return cb.function_return_value != nullptr &&
         *static_cast<const cudaError_t*>(cb.function_return_value) == cudaSuccess;
}

// Resource and synchronize callbacks that real CUPTI raises from inside the call, before its
// API_EXIT callback.
void FireInsideCallAtExit(CUpti_Subscriber_st* s, const SimgpuApiCallback& cb) {
  auto* context = static_cast<CUcontext>(cb.context);
  if (t_context_created_pending != nullptr) {
    CUpti_ResourceData created{};
    created.context = static_cast<CUcontext>(t_context_created_pending);
    t_context_created_pending = nullptr;
    Fire(s, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &created);
  }
  if (cb.domain != CUPTI_CB_DOMAIN_RUNTIME_API || !Succeeded(cb)) return;
  cudaStream_t* created_stream = nullptr;
  switch (cb.cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreate_v3020:
      created_stream = static_cast<const cudaStreamCreate_v3020_params*>(cb.function_params)->pStream;
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithFlags_v5000:
      created_stream =
          static_cast<const cudaStreamCreateWithFlags_v5000_params*>(cb.function_params)->pStream;
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithPriority_v5050:
      created_stream =
          static_cast<const cudaStreamCreateWithPriority_v5050_params*>(cb.function_params)->pStream;
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000: {
      CUpti_SynchronizeData sync{};
      sync.context = context;
      sync.stream = reinterpret_cast<CUstream>(
          static_cast<const cudaStreamSynchronize_v3020_params*>(cb.function_params)->stream);
      Fire(s, CUPTI_CB_DOMAIN_SYNCHRONIZE, CUPTI_CBID_SYNCHRONIZE_STREAM_SYNCHRONIZED, &sync);
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaThreadSynchronize_v3020: {
      CUpti_SynchronizeData sync{};
      sync.context = context;
      Fire(s, CUPTI_CB_DOMAIN_SYNCHRONIZE, CUPTI_CBID_SYNCHRONIZE_CONTEXT_SYNCHRONIZED, &sync);
      break;
    }
    default:
      break;
  }
  if (created_stream != nullptr) {
    CUpti_ResourceData res{};
    res.context = context;
    res.resourceHandle.stream = reinterpret_cast<CUstream>(*created_stream);
    Fire(s, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_STREAM_CREATED, &res);
  }
}

void FireInsideCallAtEnter(CUpti_Subscriber_st* s, const SimgpuApiCallback& cb) {
  if (cb.domain != CUPTI_CB_DOMAIN_RUNTIME_API) return;
  if (cb.cbid != CUPTI_RUNTIME_TRACE_CBID_cudaStreamDestroy_v3020 &&
      cb.cbid != CUPTI_RUNTIME_TRACE_CBID_cudaStreamDestroy_v5050) {
    return;
  }
  CUpti_ResourceData res{};
  res.context = static_cast<CUcontext>(cb.context);
  // Both param structs are { cudaStream_t stream; }.
  res.resourceHandle.stream = reinterpret_cast<CUstream>(
      static_cast<const cudaStreamDestroy_v5050_params*>(cb.function_params)->stream);
  Fire(s, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING, &res);
}

}  // namespace

void DispatchApiCallback(const SimgpuApiCallback& cb) {
  NoteContext(cb.context, cb.context_uid);  // even with nobody listening: see NoteContext
  CUpti_Subscriber_st* s = g_current.load(std::memory_order_acquire);
  if (s == nullptr) {
    if (cb.site == CUPTI_API_EXIT) t_context_created_pending = nullptr;
    return;
  }
  auto domain = static_cast<CUpti_CallbackDomain>(cb.domain);
  CUpti_CallbackData data{};
  data.callbackSite = static_cast<CUpti_ApiCallbackSite>(cb.site);
  data.functionName = cb.function_name;
  data.functionParams = cb.function_params;
  data.functionReturnValue = cb.function_return_value;
  data.symbolName = cb.symbol_name;
  data.context = static_cast<CUcontext>(cb.context);
  data.contextUid = cb.context_uid;
  data.correlationData = cb.correlation_data;
  data.correlationId = cb.correlation_id;
  if (cb.site == CUPTI_API_ENTER) {
    Fire(s, domain, cb.cbid, &data);
    FireInsideCallAtEnter(s, cb);
  } else {
    FireInsideCallAtExit(s, cb);
    Fire(s, domain, cb.cbid, &data);
  }
}

namespace {
std::mutex g_graph_ids_mu;
std::unordered_map<const void*, uint64_t>& GraphNodeIds() {
  static auto* ids = new std::unordered_map<const void*, uint64_t>;
  return *ids;
}
std::unordered_map<const void*, uint32_t>& GraphIds() {
  static auto* ids = new std::unordered_map<const void*, uint32_t>;
  return *ids;
}
}  // namespace

void DispatchGraphNodeEvent(const SimgpuGraphNodeEvent& ev) {
  {
    std::lock_guard<std::mutex> lock(g_graph_ids_mu);
    GraphNodeIds()[ev.node] = ev.node_id;
    if (ev.original_node != nullptr) GraphNodeIds()[ev.original_node] = ev.original_node_id;
    GraphIds()[ev.graph] = ev.graph_id;
  }
  CUpti_Subscriber_st* s = g_current.load(std::memory_order_acquire);
  if (s == nullptr) return;
  CUpti_GraphData graph{};
  graph.graph = static_cast<CUgraph>(ev.graph);
  graph.node = static_cast<CUgraphNode>(ev.node);
  graph.originalNode = static_cast<CUgraphNode>(ev.original_node);
  graph.nodeType = static_cast<CUgraphNodeType>(ev.node_type);
  graph.graphExec = static_cast<CUgraphExec>(ev.graph_exec);
  CUpti_ResourceData res{};
  res.context = static_cast<CUcontext>(ev.context);
  res.resourceDescriptor = &graph;
  Fire(s, CUPTI_CB_DOMAIN_RESOURCE, ev.cbid, &res);
}

bool LookupGraphNodeId(const void* node, uint64_t* id) {
  std::lock_guard<std::mutex> lock(g_graph_ids_mu);
  auto it = GraphNodeIds().find(node);
  if (it == GraphNodeIds().end()) return false;
  *id = it->second;
  return true;
}

bool LookupGraphId(const void* graph, uint32_t* id) {
  std::lock_guard<std::mutex> lock(g_graph_ids_mu);
  auto it = GraphIds().find(graph);
  if (it == GraphIds().end()) return false;
  *id = it->second;
  return true;
}

bool LookupContextUid(void* context, uint32_t* uid) {
  std::lock_guard<std::mutex> lock(g_contexts_mu);
  for (const KnownContext& k : KnownContexts()) {
    if (k.handle == context) {
      *uid = k.uid;
      return true;
    }
  }
  return false;
}

void* LastContextOfThisThread() { return t_last_context; }

void Retire(CUpti_Subscriber_st* s) {  // with g_subscribe_mu held
  s->retired_next = g_retired;
  g_retired = s;
}

void DropSubscriber() {
  std::lock_guard<std::mutex> lock(g_subscribe_mu);
  if (CUpti_Subscriber_st* s = g_current.exchange(nullptr, std::memory_order_acq_rel)) Retire(s);
}

}  // namespace simgpu_cupti

using simgpu_cupti::DomainSize;
using simgpu_cupti::IsCurrent;

extern "C" {

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                    void* userdata) {
  return simgpu_cupti::Subscribe(subscriber, callback, userdata, nullptr);
}

CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber,
                                       CUpti_CallbackFunc callback, void* userdata,
                                       CUpti_SubscriberParams* pParams) {
  return simgpu_cupti::Subscribe(subscriber, callback, userdata, pParams);
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
  std::lock_guard<std::mutex> lock(simgpu_cupti::g_subscribe_mu);
  if (!IsCurrent(subscriber)) return CUPTI_ERROR_INVALID_PARAMETER;
  simgpu_cupti::g_current.store(nullptr, std::memory_order_release);
  simgpu_cupti::Retire(subscriber);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackState(uint32_t* enable, CUpti_SubscriberHandle subscriber,
                                           CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (enable == nullptr || !IsCurrent(subscriber) || cbid == 0 || cbid >= DomainSize(domain)) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  *enable = subscriber->enabled[domain][cbid].load(std::memory_order_relaxed) ? 1 : 0;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                         CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (!IsCurrent(subscriber) || cbid == 0 || cbid >= DomainSize(domain)) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  subscriber->enabled[domain][cbid].store(enable != 0, std::memory_order_relaxed);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                       CUpti_CallbackDomain domain) {
  if (!IsCurrent(subscriber) || DomainSize(domain) == 0) return CUPTI_ERROR_INVALID_PARAMETER;
  for (uint32_t cbid = 1; cbid < DomainSize(domain); ++cbid) {
    subscriber->enabled[domain][cbid].store(enable != 0, std::memory_order_relaxed);
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle subscriber) {
  if (!IsCurrent(subscriber)) return CUPTI_ERROR_INVALID_PARAMETER;
  for (int d = 1; d < CUPTI_CB_DOMAIN_SIZE; ++d) {
    cuptiEnableDomain(enable, subscriber, static_cast<CUpti_CallbackDomain>(d));
  }
  return CUPTI_SUCCESS;
}

}  // extern "C"
