// interposed_call.cc
#include "shim/interposed_call.h"

#include <cstring>

#include "agent/capture/api_call_builder.h"
#include "agent/capture/cuda_runtime_symbols.h"
#include "agent/capture/host_memory_map.h"

namespace gs {
namespace shim {

std::atomic<void*> g_real_functions[kMaxCudaRuntimes][kCudaApiCount] = {};
std::atomic<CaptureSource*> g_capture_source{nullptr};
std::atomic<bool> g_capture_stacks{true};

namespace {
// Correlation ids for calls CUPTI did not number (interposition mode): high bit set, so they never
// collide with CUPTI's. Each thread takes a block of kAgentCorrelationBlock from the process's
// counter and numbers its calls from it: one locked add per block, not per call (it was a quarter
// of End's samples in tests/bench/intercept_cost without stacks). Ids stay unique; they are not in
// time order across threads, which nothing asks of them: the analyzer finds a call by its id
// (host_history.h), never by its rank. A block is small beside the analyzer's ring of 2^19 ids, so
// a thread that sits on half a block while others run ahead still finds its slots.
std::atomic<uint32_t> g_next_agent_correlation_block{0};
constexpr uint32_t kAgentCorrelationBit = 0x80000000u;
constexpr uint32_t kAgentCorrelationBlock = 64;

uint32_t NextAgentCorrelation(CaptureThreadState& state) {
  if (__builtin_expect(state.next_agent_correlation == state.agent_correlation_end, 0)) {
    // Ids 1.. (0 means "none"); after 2^31 ids the counter wraps within the agent's half.
    const uint32_t block = g_next_agent_correlation_block.fetch_add(1, std::memory_order_relaxed);
    const uint32_t first = (block * kAgentCorrelationBlock) % (kAgentCorrelationBit - kAgentCorrelationBlock) + 1;
    state.next_agent_correlation = first;
    state.agent_correlation_end = first + kAgentCorrelationBlock;
  }
  return kAgentCorrelationBit | state.next_agent_correlation++;
}
}  // namespace

void* ResolveRealFunction(int runtime, CudaApi api) {
  void* f = FindFunctionOfRuntime(runtime, InfoOf(api).name);
  if (f != nullptr) g_real_functions[runtime][static_cast<size_t>(api)].store(f, std::memory_order_release);
  return f;
}

bool InterposedCall::BeginSlow(CudaApi api, uint64_t stream, CaptureThreadState& state) {
  // Marked before asking for the recorder: the first call activates the agent, and whatever CUDA
  // calls activation makes must pass straight through.
  ++state.interposer_depth;
  Recorder* recorder = AgentRecorder();
  if (recorder == nullptr || !recorder->enabled()) {
    // On demand between capture windows (GS_ON_DEMAND=1): nothing is recorded, but the few calls
    // that change what a later window must know (pinned and managed ranges, the thread's device)
    // still take effect, or a copy from a buffer pinned while dormant would look pageable.
    if (InfoOf(api).effect != CudaApiEffect::kNone && AgentCurrentState() == AgentState::kStandby) {
      state_ = &state;
      recorder_ = nullptr;  // End: effects only
      source_ = nullptr;
      api_ = api;
      paired_ = false;
      return true;
    }
    --state.interposer_depth;
    return false;
  }
  state_ = &state;
  recorder_ = recorder;
  source_ = g_capture_source.load(std::memory_order_acquire);
  api_ = api;
  stream_ = stream;
  state.pending_correlation_id = 0;
  // Event pairs (CUPTI unavailable): GPU work is timed; a stream wait tells the timer that the
  // next work may wait for more than its stream's previous work (event_pair_timer.h).
  const ApiClass api_class = InfoOf(api).api_class;
  const bool wait = api_class == ApiClass::kStreamWaitEvent;
  paired_ = false;
  if (source_ != nullptr && (IsGpuWork(api_class) || wait) && source_->wants_event_pairs()) {
    if (wait) {
      source_->OnStreamWait(stream);
    } else {
      paired_ = true;
    }
  }
  // Enter time first, exit time last (End): in interposition mode the call as the application
  // experiences it includes the event records, and the pair lies inside [enter, exit].
  enter_ns_ = MonotonicNs();
  if (paired_) source_->BeforeGpuWork(stream);
  return true;
}

void InterposedCall::End(int result, const CudaCallFacts& facts, const void* params,
                         const CallSite& site) {
  if (recorder_ == nullptr) {  // on demand, between windows (BeginSlow)
    ApplyCallEffect(api_, facts, result == 0, params, ProcessHostMemoryMap());
    --state_->interposer_depth;
    return;
  }
  uint64_t exit_ns = MonotonicNs();
  const bool ok = result == 0;
  uint32_t correlation = source_ != nullptr ? source_->TakeCorrelationId() : 0;
  if (correlation == 0) correlation = NextAgentCorrelation(*state_);
  HostMemoryMap& map = ProcessHostMemoryMap();
  const CudaApiInfo& info = InfoOf(api_);
  ApplyCallEffect(api_, facts, ok, params, map);
  ApiCallEvent event;
  std::memset(&event, 0, sizeof(event));
  BuildApiCallEvent(api_, facts, result, state_->device, ApiSource::kInterposer,
                    static_cast<uint16_t>(api_), map, &event);
  event.enter_ns = enter_ns_;
  event.correlation_id = correlation;
  if (paired_) {
    KernelLaunchShape shape;
    const bool kernel = KernelLaunchShapeOf(api_, params, &shape);
    source_->AfterGpuWork(stream_, correlation, event, kernel ? &shape : nullptr);
    exit_ns = MonotonicNs();
  }
  event.exit_ns = exit_ns;
  if (info.recorded) {
    // Skip End and the wrapper: the first frame kept is the application's call site.
    recorder_->RecordApiCallFrom(event, g_capture_stacks.load(std::memory_order_relaxed), 2, site);
  }
  --state_->interposer_depth;
}

}  // namespace shim
}  // namespace gs
