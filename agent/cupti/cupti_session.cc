// cupti_session.cc
#include "agent/cupti/cupti_session.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <iterator>

#include "agent/core/clock.h"
#include "agent/capture/api_call_builder.h"
#include "agent/capture/capture_thread_state.h"
#include "agent/capture/host_memory_map.h"
#include "agent/capture/cuda_api/cuda_api.h"
#include "agent/capture/cuda_api/cuda_driver_api.h"

namespace gs {
namespace {

// CUPTI's static callbacks find the session here (one subscriber per process).
std::atomic<CuptiSession*> g_session{nullptr};

// Registered before any activity kind is enabled: every CUPTI timestamp is then CLOCK_MONOTONIC.
uint64_t CUPTIAPI MonotonicTimestamp() { return MonotonicNs(); }

constexpr CUpti_ActivityKind kActivityKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMCPY2,           CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_MEMORY2,           CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    CUPTI_ACTIVITY_KIND_OVERHEAD,
};
// Kinds without which the session is not worth keeping (the rest are best effort).
bool IsEssential(CUpti_ActivityKind kind) {
  return kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || kind == CUPTI_ACTIVITY_KIND_MEMCPY;
}

// Calls left out of the whole-domain subscriptions (EnableApiCallbacks): they only read the
// runtime's or driver's per-thread state or a version; a framework makes them around every launch
// (cudaGetLastError after each, cudaGetDevice), they never wait, and two callbacks each would cost
// more than the call (~45 ns on simgpu, BENCHMARKS.md).
constexpr CUpti_CallbackId kStateReadingCalls[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,     CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,        CUPTI_RUNTIME_TRACE_CBID_cudaGetErrorString_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetErrorName_v6050,     CUPTI_RUNTIME_TRACE_CBID_cudaRuntimeGetVersion_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaDriverGetVersion_v3020,
};

// Triton's launcher checks every pointer argument of every launch with cuPointerGetAttribute.
constexpr CUpti_CallbackId kDriverStateReadingCalls[] = {
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,       CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice,
    CUPTI_DRIVER_TRACE_CBID_cuGetErrorString,      CUPTI_DRIVER_TRACE_CBID_cuGetErrorName,
    CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion,    CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttributes,
};

// The call's return value (cudaError_t or CUresult) at API_EXIT.
int CallResult(const CUpti_CallbackData& data) {
  return data.functionReturnValue != nullptr ? *static_cast<const int*>(data.functionReturnValue) : 0;
}

// The loaded CUPTI's cuptiGetCallbackName, for CallbackName (set by Start, never cleared: the
// library stays loaded).
std::atomic<decltype(&::cuptiGetCallbackName)> g_callback_name{nullptr};

}  // namespace

const char* CuptiSession::CallbackName(ApiSource source, uint16_t cbid) {
  const auto name_of = g_callback_name.load(std::memory_order_acquire);
  if (name_of == nullptr || source == ApiSource::kInterposer) return nullptr;
  const CUpti_CallbackDomain domain =
      source == ApiSource::kCuptiDriverCallback ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
  const char* name = nullptr;
  if (name_of(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr || name[0] == '\0') return nullptr;
  thread_local char buffer[128];
  size_t n = std::strlen(name);
  // "_v" and digits at the end: the version CUPTI appends to runtime names (a driver name's
  // "_v2" is the function's own: cuMemAlloc_v2).
  size_t cut = n;
  while (cut > 0 && name[cut - 1] >= '0' && name[cut - 1] <= '9') --cut;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cut < n && cut >= 2 && name[cut - 1] == 'v' && name[cut - 2] == '_')
    n = cut - 2;
  if (n >= sizeof buffer) n = sizeof buffer - 1;
  std::memcpy(buffer, name, n);
  buffer[n] = '\0';
  return buffer;
}

std::string CuptiSession::ResultName(CUptiResult result) const {
  const char* text = nullptr;
  if (library_.fn.cuptiGetResultString != nullptr &&
      library_.fn.cuptiGetResultString(result, &text) == CUPTI_SUCCESS && text != nullptr) {
    return text;
  }
  return "CUPTI error " + std::to_string(static_cast<int>(result));
}

bool CuptiSession::Start(Recorder& recorder, const Options& options, Failure* failure) {
  options_ = options;
  recorder_ = &recorder;
  std::string error;
  if (!LoadCuptiLibrary(options.library_path, &library_, &error)) {
    failure->what = error;
    return false;
  }
  const CuptiFunctions& fn = library_.fn;
  if (fn.cuptiGetCallbackName != nullptr) g_callback_name.store(fn.cuptiGetCallbackName, std::memory_order_release);
  // The timestamp callback must precede cuptiActivityEnable (cupti_activity.h: "should be done
  // before any of the CUPTI activity kinds are enabled").
  if (fn.cuptiActivityRegisterTimestampCallback == nullptr) {
    failure->what = library_.path + ": no cuptiActivityRegisterTimestampCallback";
    return false;
  }
  if (CUptiResult r = fn.cuptiActivityRegisterTimestampCallback(MonotonicTimestamp); r != CUPTI_SUCCESS) {
    // The real libcupti on a machine without a driver fails here (CUPTI_ERROR_UNKNOWN).
    failure->what = "cuptiActivityRegisterTimestampCallback: " + ResultName(r) + " (" + library_.path + ")";
    return false;
  }
  if (fn.cuptiSetThreadIdType != nullptr) {
    fn.cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  }

  CuptiSession* expected = nullptr;
  if (!g_session.compare_exchange_strong(expected, this)) {
    failure->what = "another gpustall CUPTI session is already running in this process";
    return false;
  }
  CUptiResult r;
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 64] = {0};
  if (fn.cuptiSubscribe_v2 != nullptr) {
    CUpti_SubscriberParams params;
    std::memset(&params, 0, sizeof(params));
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "gpustall";
    params.oldSubscriberName = holder;
    params.oldSubscriberSize = sizeof(holder);
    r = fn.cuptiSubscribe_v2(&subscriber_, OnCallback, this, &params);
  } else {
    r = fn.cuptiSubscribe(&subscriber_, OnCallback, this);
  }
  if (r != CUPTI_SUCCESS) {
    failure->what = "cuptiSubscribe: " + ResultName(r);
    failure->multiple_subscribers = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    failure->holder = holder;
    subscriber_ = nullptr;
    g_session.store(nullptr, std::memory_order_release);
    return false;
  }

  if (!pool_.Init(options.buffer_count, options.buffer_bytes)) {
    failure->what = "cannot allocate CUPTI activity buffers";
    Abandon();
    return false;
  }
  r = fn.cuptiActivityRegisterCallbacks(OnBufferRequested, OnBufferCompleted);
  if (r != CUPTI_SUCCESS) {
    failure->what = "cuptiActivityRegisterCallbacks: " + ResultName(r);
    failure->multiple_subscribers = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    Abandon();
    return false;
  }
  state_.store(kRunning, std::memory_order_release);
  for (CUpti_ActivityKind kind : kActivityKinds) {
    r = fn.cuptiActivityEnable(kind);
    if (r != CUPTI_SUCCESS && IsEssential(kind)) {
      failure->what = "cuptiActivityEnable: " + ResultName(r);
      Abandon();
      return false;
    }
  }
  // Callbacks for every runtime function of the interposer table, so that calls the shim cannot
  // see are recorded too, and for the driver functions programs call directly. A cbid this CUPTI
  // does not know is skipped.
  EnableApiCallbacks(true);
  if (fn.cuptiActivityFlushPeriod != nullptr && options.flush_period_ms > 0) {
    fn.cuptiActivityFlushPeriod(options.flush_period_ms);
  }
  return true;
}

// Undo a half-done start: nothing may keep calling us, and CUPTI is left for others.
void CuptiSession::Abandon() {
  const CuptiFunctions& fn = library_.fn;
  state_.store(kStopped, std::memory_order_release);
  for (CUpti_ActivityKind kind : kActivityKinds) fn.cuptiActivityDisable(kind);
  if (subscriber_ != nullptr) fn.cuptiUnsubscribe(subscriber_);
  subscriber_ = nullptr;
  g_session.store(nullptr, std::memory_order_release);
}

void CuptiSession::Flush(bool forced) {
  if (state_.load(std::memory_order_acquire) != kRunning) return;
  library_.fn.cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

void CuptiSession::Stop() {
  if (state_.load(std::memory_order_acquire) != kRunning) return;
  library_.fn.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  // No unsubscribe/disable/finalize at exit: CUPTI's teardown at exit is where the known hangs and
  // crashes live (agent/cupti/NOTES.md §3); a stopped session only ignores what still arrives.
  state_.store(kStopped, std::memory_order_release);
}

bool CuptiSession::EnableWholeDomain(CUpti_CallbackDomain domain, bool enable, const CUpti_CallbackId* left_out,
                                     size_t left_out_count) {
  if (options_.other_calls_min_ns < 0 || library_.fn.cuptiEnableDomain == nullptr ||
      library_.fn.cuptiEnableDomain(enable ? 1 : 0, subscriber_, domain) != CUPTI_SUCCESS)
    return false;
  if (enable) {
    for (size_t i = 0; i < left_out_count; ++i) library_.fn.cuptiEnableCallback(0, subscriber_, domain, left_out[i]);
  }
  return true;
}

void CuptiSession::EnableApiCallbacks(bool enable) {
  // The whole runtime and driver domains: a thread inside cudaFuncSetAttribute,
  // cudaStreamGetCaptureInfo or a JIT launcher's cuModuleLoadData is in CUDA, not doing host work
  // (HandleRuntimeCallback, HandleDriverCallback); else the tables' functions only.
  if (!EnableWholeDomain(CUPTI_CB_DOMAIN_RUNTIME_API, enable, kStateReadingCalls, std::size(kStateReadingCalls))) {
    for (size_t i = 0; i < kCudaApiCount; ++i) {
      const CudaApiInfo& info = kCudaApiInfo[i];
      if (!info.recorded) continue;
      library_.fn.cuptiEnableCallback(enable ? 1 : 0, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API, info.cupti_cbid);
    }
  }
  if (!EnableWholeDomain(CUPTI_CB_DOMAIN_DRIVER_API, enable, kDriverStateReadingCalls,
                         std::size(kDriverStateReadingCalls))) {
    for (size_t i = 0; i < kCudaDriverApiCount; ++i) {
      library_.fn.cuptiEnableCallback(enable ? 1 : 0, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API,
                                      kCudaDriverApiInfo[i].cupti_cbid);
    }
  }
  // Graph nodes as they are captured and instantiated: which call made each node
  // (HandleGraphNodeCallback).
  if (library_.fn.cuptiGetGraphNodeId != nullptr) {
    for (const CUpti_CallbackId cbid : {CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED})
      library_.fn.cuptiEnableCallback(enable ? 1 : 0, subscriber_, CUPTI_CB_DOMAIN_RESOURCE, cbid);
  }
}

void CuptiSession::Pause() {
  if (state_.load(std::memory_order_acquire) != kRunning) return;
  const CuptiFunctions& fn = library_.fn;
  // Off first, then flush: every record of the window reaches the recorder, none after it.
  EnableApiCallbacks(false);
  for (CUpti_ActivityKind kind : kActivityKinds) fn.cuptiActivityDisable(kind);
  fn.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  state_.store(kPaused, std::memory_order_release);
}

bool CuptiSession::Resume() {
  if (state_.load(std::memory_order_acquire) != kPaused) return false;
  const CuptiFunctions& fn = library_.fn;
  // The calls first, then the GPU records: work launched while the kinds are being enabled then
  // has its call in the window (a GPU record without its call reads as a lost host call; a call
  // without its GPU record, at the window's very start, is harmless).
  state_.store(kRunning, std::memory_order_release);
  EnableApiCallbacks(true);
  for (CUpti_ActivityKind kind : kActivityKinds) {
    const CUptiResult r = fn.cuptiActivityEnable(kind);
    if (r != CUPTI_SUCCESS && IsEssential(kind)) {
      EnableApiCallbacks(false);
      for (CUpti_ActivityKind k : kActivityKinds) fn.cuptiActivityDisable(k);
      state_.store(kPaused, std::memory_order_release);
      return false;
    }
  }
  return true;
}

void CuptiSession::OnForkChild() {
  // HPCToolkit#195: CUPTI calls in a forked child can hang forever. Mark dead; leak the rest.
  state_.store(kDead, std::memory_order_release);
  recorder_ = nullptr;
}

uint32_t CuptiSession::TakeCorrelationId() {
  CaptureThreadState& state = ThisThreadCaptureState();
  const uint32_t id = state.pending_correlation_id;
  state.pending_correlation_id = 0;
  return id;
}

uint32_t CuptiSession::DeviceOf(CUcontext context) {
  // Per-thread one-entry cache: a thread mostly stays in one context. Initial-exec, as every
  // thread-local the agent reads on a CUDA call (capture_thread_state.h says why).
  __attribute__((tls_model("initial-exec"))) static thread_local CUcontext cached_context = nullptr;
  __attribute__((tls_model("initial-exec"))) static thread_local uint32_t cached_device = 0;
  if (context == nullptr) return static_cast<uint32_t>(ThisThreadCaptureState().device);
  if (context != cached_context) {
    uint32_t device = 0;
    if (library_.fn.cuptiGetDeviceId == nullptr ||
        library_.fn.cuptiGetDeviceId(context, &device) != CUPTI_SUCCESS) {
      device = static_cast<uint32_t>(ThisThreadCaptureState().device);
    }
    cached_context = context;
    cached_device = device;
  }
  return cached_device;
}

void CUPTIAPI CuptiSession::OnCallback(void* userdata, CUpti_CallbackDomain domain,
                                       CUpti_CallbackId cbid, const void* cbdata) {
  auto* session = static_cast<CuptiSession*>(userdata);
  if (session == nullptr || cbdata == nullptr) return;
  if (session->state_.load(std::memory_order_acquire) != kRunning) return;
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    session->HandleGraphNodeCallback(cbid, static_cast<const CUpti_ResourceData*>(cbdata));
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const CallSite site{reinterpret_cast<uintptr_t>(__builtin_return_address(0)),
                      reinterpret_cast<uintptr_t>(__builtin_dwarf_cfa())};
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    session->HandleRuntimeCallback(cbid, static_cast<const CUpti_CallbackData*>(cbdata), site);
  } else {
    session->HandleDriverCallback(cbid, static_cast<const CUpti_CallbackData*>(cbdata), site);
  }
}

void CuptiSession::FinishCall(const CudaApiInfo& info, const CudaCallFacts& facts, int result,
                              const CUpti_CallbackData& data, ApiSource source, CUpti_CallbackId cbid,
                              uint64_t exit_ns, const CallSite& site) {
  HostMemoryMap& map = ProcessHostMemoryMap();
  ApplyCallEffect(info, facts, result == 0, data.functionParams, map);
  if (!info.recorded || recorder_ == nullptr || !recorder_->enabled()) return;
  ApiCallEvent event;
  std::memset(&event, 0, sizeof(event));
  BuildApiCallEvent(info, facts, result, static_cast<int>(DeviceOf(data.context)), source,
                    static_cast<uint16_t>(cbid), map, &event);
  event.enter_ns = data.correlationData != nullptr && *data.correlationData != 0 ? *data.correlationData
                                                                                   : exit_ns;
  event.exit_ns = exit_ns;
  event.correlation_id = data.correlationId;
  // Frames to skip: this function (inlined), the handler and OnCallback; the runtime's own frames
  // stay (they are few and show where the call came from, e.g. a library's embedded runtime). The
  // site is OnCallback's: the first PC kept is its return address, so the same dispatcher frame at
  // the same stack pointer with every caller's return address still in its slot reuses the last
  // unwind (exact by the same argument as a wrapper's site; the Python frames are read afresh for
  // every record).
  recorder_->RecordApiCallFrom(event, options_.capture_stacks, 2, site);
}

void CuptiSession::FinishOtherCall(const CUpti_CallbackData& data, ApiSource source, CUpti_CallbackId cbid,
                                   uint64_t exit_ns, const CallSite& site) {
  // Outside the tables: no facts, no effect, class "other". Most such calls are short and
  // frequent (cudaStreamIsCapturing in every allocation, cuPointerGetAttribute per argument): a
  // record each would cost more than they take and hold no gap, so below the threshold they are
  // only counted.
  if (recorder_ == nullptr) return;
  const uint64_t enter_ns =
      data.correlationData != nullptr && *data.correlationData != 0 ? *data.correlationData : exit_ns;
  if (static_cast<int64_t>(exit_ns - enter_ns) < options_.other_calls_min_ns) {
    recorder_->CountUnrecordedCall(exit_ns - enter_ns);
    return;
  }
  const CudaApiInfo other{nullptr, cbid, ApiClass::kOther, 0, CudaApiEffect::kNone, true};
  FinishCall(other, CudaCallFacts{}, CallResult(data), data, source, cbid, exit_ns, site);
}

void CuptiSession::HandleRuntimeCallback(CUpti_CallbackId cbid, const CUpti_CallbackData* data,
                                         const CallSite& site) {
  CaptureThreadState& thread = ThisThreadCaptureState();
  if (thread.interposer_depth > 0) {
    // Inside a shim wrapper (or the agent's own CUDA work): the wrapper records the call; it only
    // needs CUPTI's correlation id. The first ENTER wins: it belongs to the wrapper's own runtime
    // call, not to one the runtime makes internally.
    if (data->callbackSite == CUPTI_API_ENTER && thread.pending_correlation_id == 0) {
      thread.pending_correlation_id = data->correlationId;
    }
    return;
  }
  if (data->callbackSite == CUPTI_API_ENTER) {
    if (data->correlationData != nullptr) *data->correlationData = MonotonicNs();
    thread.cupti_call_correlation = data->correlationId != 0 ? data->correlationId : 1;
    return;
  }
  thread.cupti_call_correlation = 0;
  const uint64_t exit_ns = MonotonicNs();
  CudaApi api;
  if (!CudaApiFromCupti(cbid, &api)) {
    FinishOtherCall(*data, ApiSource::kCuptiCallback, cbid, exit_ns, site);
    return;
  }
  const int result = CallResult(*data);
  const CudaCallFacts facts = CudaFactsFromCuptiParams(api, data->functionParams, result == 0);
  FinishCall(InfoOf(api), facts, result, *data, ApiSource::kCuptiCallback, cbid, exit_ns, site);
}

void CuptiSession::HandleDriverCallback(CUpti_CallbackId cbid, const CUpti_CallbackData* data,
                                        const CallSite& site) {
  CaptureThreadState& thread = ThisThreadCaptureState();
  if (data->callbackSite == CUPTI_API_ENTER) {
    // Inside a wrapper, a runtime call or a recorded driver call: that call's own driver work.
    // Its EXIT is told apart by the correlation id, which a nested driver call shares with its
    // runtime call (CUPTI_CORRELATION.md fact 5) but never with a recorded driver call's EXIT
    // unless it is that call.
    if (InsideCudaCall(thread)) return;
    if (data->correlationData != nullptr) *data->correlationData = MonotonicNs();
    thread.cupti_driver_correlation = data->correlationId != 0 ? data->correlationId : 1;
    return;
  }
  const uint32_t own = data->correlationId != 0 ? data->correlationId : 1;
  if (thread.cupti_driver_correlation != own) return;
  thread.cupti_driver_correlation = 0;
  const uint64_t exit_ns = MonotonicNs();
  CudaDriverApi api;
  if (!CudaDriverApiFromCupti(cbid, &api)) {
    FinishOtherCall(*data, ApiSource::kCuptiDriverCallback, cbid, exit_ns, site);
    return;
  }
  const int result = CallResult(*data);
  const CudaCallFacts facts = CudaDriverFactsFromCuptiParams(api, data->functionParams, result == 0);
  FinishCall(InfoOf(api), facts, result, *data, ApiSource::kCuptiDriverCallback, cbid, exit_ns, site);
}

void CuptiSession::HandleGraphNodeCallback(CUpti_CallbackId cbid, const CUpti_ResourceData* data) {
  if (cbid != CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED && cbid != CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) return;
  if (recorder_ == nullptr || library_.fn.cuptiGetGraphNodeId == nullptr) return;
  const auto* graph = static_cast<const CUpti_GraphData*>(data->resourceDescriptor);
  if (graph == nullptr || graph->node == nullptr) return;
  GraphNodeEvent node{};
  if (library_.fn.cuptiGetGraphNodeId(graph->node, &node.node_id) != CUPTI_SUCCESS) return;
  if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) {
    if (graph->originalNode == nullptr ||
        library_.fn.cuptiGetGraphNodeId(graph->originalNode, &node.original_node_id) != CUPTI_SUCCESS)
      return;
  } else {
    // Created inside the calling thread's current API call (CUPTI_CORRELATION.md fact 10): a
    // wrapper's (its CUPTI id is pending), or one recorded from a runtime or driver callback.
    const CaptureThreadState& thread = ThisThreadCaptureState();
    node.correlation_id = thread.pending_correlation_id != 0   ? thread.pending_correlation_id
                          : thread.cupti_call_correlation != 0 ? thread.cupti_call_correlation
                                                               : thread.cupti_driver_correlation;
  }
  node.thread_id = static_cast<uint64_t>(syscall(SYS_gettid));
  node.time_ns = MonotonicNs();
  recorder_->RecordGraphNode(node);
}

void CUPTIAPI CuptiSession::OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;  // as many as fit
  CuptiSession* session = g_session.load(std::memory_order_acquire);
  uint8_t* b = session != nullptr ? session->pool_.Acquire() : nullptr;
  *buffer = b;
  *size = b != nullptr ? session->pool_.buffer_bytes() : 0;
}

void CUPTIAPI CuptiSession::OnBufferCompleted(CUcontext context, uint32_t stream_id,
                                              uint8_t* buffer, size_t size, size_t valid_size) {
  (void)size;
  CuptiSession* session = g_session.load(std::memory_order_acquire);
  if (session == nullptr) return;
  if (session->state_.load(std::memory_order_acquire) == kRunning && buffer != nullptr) {
    session->ConvertBuffer(context, stream_id, buffer, valid_size);
  }
  session->pool_.Release(buffer);
}

void CuptiSession::ConvertBuffer(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                 size_t valid_size) {
  // Buffers may complete on several threads at once (CUPTI's worker and a FlushAll caller); the
  // converter's context table is not shared between them.
  while (convert_busy_.exchange(true, std::memory_order_acquire)) {
  }
  CUpti_Activity* record = nullptr;
  // A run of converted records goes to the recorder at once (one lock, not one per record).
  constexpr size_t kRun = 64;
  GpuActivityEvent run[kRun];
  size_t n = 0;
  while (library_.fn.cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    if (converter_.Convert(record, &run[n]) && ++n == kRun) {
      recorder_->RecordGpuActivities(run, n);
      n = 0;
    }
  }
  if (n > 0) recorder_->RecordGpuActivities(run, n);
  convert_busy_.store(false, std::memory_order_release);
  size_t dropped = 0;
  if (library_.fn.cuptiActivityGetNumDroppedRecords != nullptr &&
      library_.fn.cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS &&
      dropped > 0) {
    recorder_->AddDropped(dropped, 0);
  }
}

}  // namespace gs
