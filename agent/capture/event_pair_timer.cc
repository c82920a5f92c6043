// event_pair_timer.cc
#include "agent/capture/event_pair_timer.h"

#include "agent/capture/stream_capture.h"

#include <cupti_activity.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "agent/core/agent_thread.h"
#include "agent/core/clock.h"
#include "agent/capture/capture_thread_state.h"
#include "agent/capture/cuda_runtime_symbols.h"

namespace gs {

// The real runtime functions, resolved past the shim (dlsym RTLD_NEXT): the agent's own event
// records must neither recurse into the interposers nor show up as the application's calls.
struct EventPairTimer::Runtime {
  decltype(&::cudaEventCreateWithFlags) EventCreateWithFlags;
  decltype(&::cudaEventRecord) EventRecord;
  decltype(&::cudaEventQuery) EventQuery;
  decltype(&::cudaEventSynchronize) EventSynchronize;
  decltype(&::cudaEventElapsedTime) EventElapsedTime;
  decltype(&::cudaStreamCreateWithFlags) StreamCreateWithFlags;
  decltype(&::cudaSetDevice) SetDevice;
  decltype(&::cudaStreamIsCapturing) StreamIsCapturing;  // optional
};

namespace {

template <typename F>
bool Find(const char* name, F* out) {
  *out = reinterpret_cast<F>(FindCudaRuntimeSymbol(name));
  return *out != nullptr;
}

uint8_t CuptiCopyKind(const ApiCallEvent& call) {
  switch (call.copy_kind) {
    case cudaMemcpyHostToDevice: return CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    case cudaMemcpyDeviceToHost: return CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    case cudaMemcpyDeviceToDevice: return CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
    case cudaMemcpyHostToHost: return CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
    default: break;
  }
  const bool src_host = call.src_kind == MemKind::kPinned || call.src_kind == MemKind::kPageable;
  const bool dst_host = call.dst_kind == MemKind::kPinned || call.dst_kind == MemKind::kPageable;
  if (src_host && !dst_host) return CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  if (!src_host && dst_host) return CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  return CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN;
}

// Synchronous copies whose device work is finished when the call returns: to host memory, and
// from pinned host memory (a pageable host-to-device copy may return once the data is staged).
bool CompletesBeforeReturn(const ApiCallEvent& call) {
  if (call.api_class != ApiClass::kMemcpy || (call.flags & kApiFlagAsync) != 0) return false;
  const bool dst_host = call.dst_kind == MemKind::kPageable || call.dst_kind == MemKind::kPinned;
  return dst_host || call.src_kind == MemKind::kPinned;
}

void SleepMs(int ms) {
  timespec ts{0, static_cast<long>(ms) * 1000000L};
  nanosleep(&ts, nullptr);
}

}  // namespace

bool EventPairTimer::Start(Recorder& recorder, bool poller_thread) {
  auto* rt = new Runtime{};
  if (!Find("cudaEventCreateWithFlags", &rt->EventCreateWithFlags) ||
      !Find("cudaEventRecord", &rt->EventRecord) || !Find("cudaEventQuery", &rt->EventQuery) ||
      !Find("cudaEventSynchronize", &rt->EventSynchronize) ||
      !Find("cudaEventElapsedTime", &rt->EventElapsedTime) ||
      !Find("cudaStreamCreateWithFlags", &rt->StreamCreateWithFlags) ||
      !Find("cudaSetDevice", &rt->SetDevice)) {
    delete rt;
    return false;
  }
  Find("cudaStreamIsCapturing", &rt->StreamIsCapturing);  // optional: BeforeGpuWork
  rt_ = rt;
  recorder_ = &recorder;
  devices_ = new Device[kMaxDevices];
  stop_.store(false, std::memory_order_relaxed);
  running_.store(true, std::memory_order_release);
  if (!poller_thread) return true;
  poller_started_ = StartAgentThread("gpustall-events", &EventPairTimer::PollerMain, this, &poller_) == 0;
  if (!poller_started_) {
    running_.store(false, std::memory_order_release);
    return false;
  }
  return true;
}

void* EventPairTimer::PollerMain(void* self) {
  static_cast<EventPairTimer*>(self)->PollerLoop();
  return nullptr;
}

void EventPairTimer::PollerLoop() {
  // Every CUDA call of this thread is the agent's own (its sleeps are: StartAgentThread).
  ScopedAgentCudaCall agent_thread;
  while (!stop_.load(std::memory_order_acquire)) {
    SleepMs(in_flight_.load(std::memory_order_relaxed) > 0 ? 2 : 10);
    Poll(false);
  }
}

bool EventPairTimer::TakeReference(int device, int index) {
  Device& d = devices_[device];
  Reference& ref = d.references[index];
  if (ref.event == nullptr && rt_->EventCreateWithFlags(&ref.event, cudaEventDefault) != cudaSuccess) {
    ref.event = nullptr;
    return false;
  }
  // The device stamps the event when it reaches it, which on our idle stream is when the record
  // call submits it: somewhere inside [before, after] of the record call. A thread preempted
  // inside the call widens that window (milliseconds on a loaded machine), so the record is
  // retried until the window is narrow. (The synchronize is outside the window: waking up from it
  // may take far longer than the device needed.)
  constexpr uint64_t kNarrowWindowNs = 50'000;
  constexpr int kAttempts = 8;
  uint64_t before = 0, after = 0;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    before = MonotonicNs();
    if (rt_->EventRecord(ref.event, d.stream) != cudaSuccess) return false;
    after = MonotonicNs();
    if (rt_->EventSynchronize(ref.event) != cudaSuccess) return false;
    if (after - before <= kNarrowWindowNs) break;
  }
  ref.host_ns = before + (after - before) / 2;
  ref.generation.fetch_add(1, std::memory_order_acq_rel);
  return true;
}

bool EventPairTimer::EnsureDevice(int device) {
  Device& d = devices_[device];
  if (d.ready.load(std::memory_order_acquire)) return true;
  std::lock_guard<std::mutex> lock(d.init_mutex);
  if (d.ready.load(std::memory_order_relaxed)) return true;
  // On the application thread, whose current device is `device`.
  if (d.stream == nullptr &&
      rt_->StreamCreateWithFlags(&d.stream, cudaStreamNonBlocking) != cudaSuccess) {
    d.stream = nullptr;
    return false;
  }
  if (!TakeReference(device, 0)) return false;
  d.current.store(0, std::memory_order_release);
  d.ready.store(true, std::memory_order_release);
  return true;
}

void EventPairTimer::OnStreamWait() { chain_key_.store(0, std::memory_order_release); }

void EventPairTimer::BeforeGpuWork(uint64_t stream) {
  CaptureThreadState& thread = ThisThreadCaptureState();
  thread.pending_pair_slot_plus_one = 0;
  if (!running_.load(std::memory_order_acquire)) return;
  // Work left untimed breaks the chain: the next work on its stream may start after it.
  const auto untimed = [this] { chain_key_.store(0, std::memory_order_release); };
  // Never into a capturing stream (stream_capture.h): the event would join the application's
  // graph. The question is asked only once the process has begun a capture; a runtime without
  // cudaStreamIsCapturing, or an answer other than "not capturing", means no event.
  if (StreamCaptureBegun()) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (rt_->StreamIsCapturing == nullptr ||
        rt_->StreamIsCapturing(reinterpret_cast<cudaStream_t>(stream), &status) != cudaSuccess ||
        status != cudaStreamCaptureStatusNone) {
      capturing_.fetch_add(1, std::memory_order_relaxed);
      untimed();
      return;
    }
  }
  const int device = thread.device;
  if (device < 0 || device >= kMaxDevices || !EnsureDevice(device)) {
    failed_.fetch_add(1, std::memory_order_relaxed);
    untimed();
    return;
  }
  Device& d = devices_[device];
  __attribute__((tls_model("initial-exec"))) static thread_local uint32_t hint = 0;  // as capture_thread_state.h
  Slot* slot = nullptr;
  int index = 0;
  for (int i = 0; i < kSlotsPerDevice; ++i) {
    index = static_cast<int>((hint + static_cast<uint32_t>(i)) % kSlotsPerDevice);
    uint32_t expected = kFree;
    if (d.slots[index].state.compare_exchange_strong(expected, kClaimed, std::memory_order_acquire)) {
      slot = &d.slots[index];
      hint = static_cast<uint32_t>(index) + 1;
      break;
    }
  }
  if (slot == nullptr) {
    overflowed_.fetch_add(1, std::memory_order_relaxed);
    untimed();
    return;
  }
  if (slot->start == nullptr) {
    // Created on first use, on a thread whose current device is the slot's device.
    if (rt_->EventCreateWithFlags(&slot->start, cudaEventDefault) != cudaSuccess ||
        rt_->EventCreateWithFlags(&slot->end, cudaEventDefault) != cudaSuccess) {
      slot->start = slot->end = nullptr;  // leaks at most one event; retried next time
      slot->state.store(kFree, std::memory_order_release);
      failed_.fetch_add(1, std::memory_order_relaxed);
      untimed();
      return;
    }
  }
  slot->reference = d.current.load(std::memory_order_acquire);
  slot->reference_generation = d.references[slot->reference].generation.load(std::memory_order_acquire);
  // Chained when the last work the process timed was this thread's on this same stream (header
  // comment). A chain is the thread's number above the agent's stream id (kChainStreamBits).
  // Threads are numbered process-wide, from 1, when they first time work.
  static std::atomic<uint32_t> chain_threads{0};
  __attribute__((tls_model("initial-exec"))) static thread_local uint32_t chain_thread = 0;
  if (chain_thread == 0) chain_thread = chain_threads.fetch_add(1, std::memory_order_relaxed) + 1;
  static_assert(kStreamTable < (1 << kChainStreamBits), "stream ids fit below the thread's number");
  const uint32_t stream_id = StreamId(stream);
  slot->chain = stream_id == 0 ? 0 : (uint64_t{chain_thread} << kChainStreamBits) | stream_id;
  slot->chained = slot->chain != 0 && chain_key_.exchange(slot->chain, std::memory_order_acq_rel) == slot->chain;
  if (slot->chain == 0) untimed();
  if (!slot->chained &&
      rt_->EventRecord(slot->start, reinterpret_cast<cudaStream_t>(stream)) != cudaSuccess) {
    slot->state.store(kFree, std::memory_order_release);
    failed_.fetch_add(1, std::memory_order_relaxed);
    untimed();
    return;
  }
  thread.pending_pair_slot_plus_one = device * kSlotsPerDevice + index + 1;
}

void EventPairTimer::AfterGpuWork(uint64_t stream, uint32_t correlation_id, const ApiCallEvent& call,
                                  const KernelLaunchShape* launch) {
  CaptureThreadState& thread = ThisThreadCaptureState();
  const int token = thread.pending_pair_slot_plus_one;
  thread.pending_pair_slot_plus_one = 0;
  if (token <= 0 || devices_ == nullptr) return;
  const int device = (token - 1) / kSlotsPerDevice;
  Slot& slot = devices_[device].slots[(token - 1) % kSlotsPerDevice];
  slot.end_bound_ns = CompletesBeforeReturn(call) ? MonotonicNs() : UINT64_MAX;
  slot.entry_ns = call.enter_ns;
  if (call.result != 0 ||
      rt_->EventRecord(slot.end, reinterpret_cast<cudaStream_t>(stream)) != cudaSuccess) {
    if (call.result == 0) failed_.fetch_add(1, std::memory_order_relaxed);
    // The work went untimed, or there was none: the next work's predecessor is not this.
    chain_key_.store(0, std::memory_order_release);
    slot.state.store(kFree, std::memory_order_release);
    return;
  }
  if (slot.chained) chained_.fetch_add(1, std::memory_order_relaxed);
  // Numbered in this thread's order; a chained piece of work's predecessor is the thread's
  // previous work in flight when that was on the same chain (else unknown: its start is its
  // call's entry).
  __attribute__((tls_model("initial-exec"))) static thread_local uint64_t sequence = 0;
  __attribute__((tls_model("initial-exec"))) static thread_local uint64_t last_chain = 0;
  slot.sequence = ++sequence;
  slot.predecessor = slot.chained && last_chain == slot.chain ? slot.sequence - 1 : 0;
  last_chain = slot.chain;
  GpuActivityEvent& a = slot.activity;
  std::memset(&a, 0, sizeof(a));
  a.source = ActivitySource::kEventPair;
  a.correlation_id = correlation_id;
  a.device = static_cast<uint32_t>(device);
  a.stream_id = static_cast<uint32_t>(slot.chain & ((uint64_t{1} << kChainStreamBits) - 1));  // BeforeGpuWork's
  a.bytes = call.bytes;
  a.address = call.address;
  switch (call.api_class) {
    case ApiClass::kMemcpy:
      a.kind = ActivityKind::kMemcpy;
      a.copy_kind = CuptiCopyKind(call);
      a.src_kind = call.src_kind;
      a.dst_kind = call.dst_kind;
      a.flags = (call.flags & kApiFlagAsync) ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
      break;
    case ApiClass::kMemset:
      a.kind = ActivityKind::kMemset;
      a.dst_kind = MemKind::kDevice;
      break;
    default:
      a.kind = ActivityKind::kKernel;
      // The launch's configuration; the kernel's registers and static shared memory are its
      // image's, which this path does not see (cuda_launch.def).
      if (launch != nullptr) {
        for (int i = 0; i < 3; ++i) a.grid[i] = launch->grid[i], a.block[i] = launch->block[i];
        a.dynamic_shared_bytes = launch->dynamic_shared_bytes;
        a.launch_flags = kLaunchConfigKnown;
      }
      break;
  }
  in_flight_.fetch_add(1, std::memory_order_relaxed);
  slot.state.store(kInFlight, std::memory_order_release);
}

EventPairTimer::Resolution EventPairTimer::Resolve(int device, Slot& slot, bool forced, bool complete) {
  uint32_t expected = kInFlight;
  if (!slot.state.compare_exchange_strong(expected, kConverting, std::memory_order_acquire)) {
    return Resolution::kPending;
  }
  cudaError_t query = cudaSuccess;
  if (!complete) {
    // Asked with cudaEventQuery, as NVIDIA documents for polling (cudaEventElapsedTime's own
    // cudaErrorNotReady is not guaranteed to carry the errors of pending work).
    asked_.fetch_add(1, std::memory_order_relaxed);
    if (forced) rt_->EventSynchronize(slot.end);
    query = rt_->EventQuery(slot.end);
    if (query == cudaErrorNotReady) {
      slot.state.store(kInFlight, std::memory_order_release);
      return Resolution::kPending;
    }
  }
  const Reference& ref = devices_[device].references[slot.reference];
  float start_ms = 0, end_ms = 0;
  cudaError_t elapsed = query;
  if (elapsed == cudaSuccess && !slot.chained) elapsed = rt_->EventElapsedTime(&start_ms, ref.event, slot.start);
  if (elapsed == cudaSuccess) elapsed = rt_->EventElapsedTime(&end_ms, ref.event, slot.end);
  if (elapsed == cudaErrorNotReady && complete) {
    // Stream order said complete, the device did not: its stream is not the one the chain's later
    // work went to (a destroyed stream's handle given to a new one). Asked again next time.
    slot.state.store(kInFlight, std::memory_order_release);
    return Resolution::kPending;
  }
  if (elapsed != cudaSuccess ||
      ref.generation.load(std::memory_order_acquire) != slot.reference_generation) {
    failed_.fetch_add(1, std::memory_order_relaxed);
    // Its end is unknown: the chain's next work starts at its call's entry, and is not held
    // waiting for this one.
    AdvanceChainEnd(slot, 0);
    in_flight_.fetch_sub(1, std::memory_order_relaxed);
    slot.state.store(kFree, std::memory_order_release);
    return Resolution::kFailed;
  }
  GpuActivityEvent& a = slot.activity;
  a.start_ns = ref.host_ns + static_cast<uint64_t>(std::llround(static_cast<double>(start_ms) * 1e6));
  a.end_ns = ref.host_ns + static_cast<uint64_t>(std::llround(static_cast<double>(end_ms) * 1e6));
  if (a.end_ns > slot.end_bound_ns) a.end_ns = slot.end_bound_ns;
  return Resolution::kResolved;
}

void EventPairTimer::Finish(Slot& slot) {
  ChainEnd& previous = chain_ends_[ChainEndIndex(slot.chain)];
  const bool same = slot.chain != 0 && previous.chain == slot.chain;
  if (slot.predecessor != 0 && same && previous.sequence < slot.predecessor) {
    // Its predecessor (the one numbered before it, on this chain) is not converted yet: it was
    // not yet in flight when the poll passed its slot. Converted next time, after it.
    slot.state.store(kInFlight, std::memory_order_release);
    return;
  }
  GpuActivityEvent a = slot.activity;
  const bool known = slot.predecessor != 0 && same && previous.sequence == slot.predecessor &&
                     previous.end_ns != 0;
  if (slot.chained) {
    a.start_ns = std::max(slot.entry_ns, known ? previous.end_ns : 0);
    if (a.start_ns > a.end_ns) a.start_ns = a.end_ns;
  } else if (a.end_ns < a.start_ns) {
    a.end_ns = a.start_ns;
  }
  AdvanceChainEnd(slot, known ? std::max(previous.end_ns, a.end_ns) : a.end_ns);
  recorder_->RecordGpuActivity(a);
  in_flight_.fetch_sub(1, std::memory_order_relaxed);
  slot.state.store(kFree, std::memory_order_release);
}

void EventPairTimer::AdvanceChainEnd(const Slot& slot, uint64_t end_ns) {
  if (slot.chain == 0) return;
  ChainEnd& previous = chain_ends_[ChainEndIndex(slot.chain)];
  // Never back: a slot converted after a later one of its chain (it was not yet in flight when a
  // poll passed its slot, and the later one was not chained to it) leaves the later one's end.
  if (previous.chain != slot.chain || previous.sequence < slot.sequence) {
    previous = ChainEnd{slot.chain, slot.sequence, end_ns};
  }
}

void EventPairTimer::ConvertChain(int device, const int* first, const int* last, bool forced) {
  Device& d = devices_[device];
  // Stream order: the chain's completed work is a prefix of it. The newest is asked first (in a
  // launch-bound loop every one has completed by the next poll); when it has not, the prefix's
  // end is found by halves (a deep queue: a few asks, not one a piece of work). A forced poll
  // waits for each one it asks.
  const int n = static_cast<int>(last - first);
  uint8_t* asked = d.asked + (first - d.in_flight);  // kUnasked, kAskedResolved, kAskedNot
  const auto ask = [&](int k) {
    const bool resolved = Resolve(device, d.slots[first[k]], forced, /*complete=*/false) == Resolution::kResolved;
    asked[k] = resolved ? kAskedResolved : kAskedNot;
    return resolved;
  };
  for (int k = 0; k < n; ++k) asked[k] = kUnasked;
  int newest = -1;
  if (ask(n - 1)) {
    newest = n - 1;
  } else {
    for (int lo = 0, hi = n - 1; lo < hi;) {  // the prefix ends in [lo, hi]
      const int mid = lo + (hi - lo) / 2;
      if (ask(mid)) {
        newest = mid;
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
  }
  for (int k = 0; k <= newest; ++k) {
    // Not complete after all, or failed (its slot freed, maybe claimed again by now): skipped.
    if (asked[k] == kAskedNot) continue;
    Slot& slot = d.slots[first[k]];
    if (asked[k] == kUnasked && Resolve(device, slot, forced, /*complete=*/true) != Resolution::kResolved) continue;
    Finish(slot);  // or held, when its predecessor was left pending
  }
}

void EventPairTimer::Poll(bool forced) {
  if (!running_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(poll_mutex_);
  const uint64_t now = MonotonicNs();
  for (int device = 0; device < kMaxDevices; ++device) {
    Device& d = devices_[device];
    if (!d.ready.load(std::memory_order_acquire)) continue;
    if (in_flight_.load(std::memory_order_relaxed) > 0 || forced) {
      // The slots in flight, by chain and, within one, in the order its thread put them in
      // flight: stream order, in which its end events complete. Work put in flight while the
      // slots are passed may be missed (left for the next poll) while a later one of its chain is
      // seen: Finish holds that one back. (A forced poll has waited for the newest of each chain;
      // what is submitted while it runs, it leaves to the next one.)
      int count = 0;
      for (int i = 0; i < kSlotsPerDevice; ++i) {
        if (d.slots[i].state.load(std::memory_order_acquire) == kInFlight) d.in_flight[count++] = i;
      }
      std::sort(d.in_flight, d.in_flight + count, [&d](int x, int y) {
        const Slot& a = d.slots[x];
        const Slot& b = d.slots[y];
        if (a.chain != b.chain) return a.chain < b.chain;
        return a.sequence < b.sequence;
      });
      for (int* first = d.in_flight; first != d.in_flight + count;) {
        int* last = first + 1;
        // Work without a chain (the stream table was full) is asked on its own.
        const uint64_t chain = d.slots[*first].chain;
        while (chain != 0 && last != d.in_flight + count && d.slots[*last].chain == chain) ++last;
        ConvertChain(device, first, last, forced);
        first = last;
      }
    }
    // Renew the reference so that elapsed times stay short (float ms). Pairs still pointing at the
    // slot being reused are dropped and counted (they would be > 14 s old).
    const int current = d.current.load(std::memory_order_relaxed);
    if (now - d.references[current].host_ns > kReferencePeriodNs && !forced) {
      const int next = (current + 1) % kReferences;
      if (rt_->SetDevice(device) == cudaSuccess && TakeReference(device, next)) {
        d.current.store(next, std::memory_order_release);
      }
    }
  }
  const uint64_t lost = overflowed_.exchange(0, std::memory_order_relaxed) +
                        failed_.exchange(0, std::memory_order_relaxed);
  if (lost > 0) recorder_->AddDropped(0, lost);
}

EventPairTimer::~EventPairTimer() {
  Stop();
  delete[] devices_;
  delete rt_;
}

void EventPairTimer::Stop() {
  if (!running_.load(std::memory_order_acquire)) return;
  stop_.store(true, std::memory_order_release);
  if (poller_started_) pthread_join(poller_, nullptr);
  poller_started_ = false;
  {
    ScopedAgentCudaCall agent_call;
    Poll(true);
  }
  running_.store(false, std::memory_order_release);
}

void EventPairTimer::OnForkChild() {
  // The poller thread does not exist in the child, and the parent's events belong to a CUDA
  // context the child cannot use: forget everything, free nothing.
  running_.store(false, std::memory_order_release);
  poller_started_ = false;
}

uint32_t EventPairTimer::StreamId(uint64_t stream) {
  // 0 (the legacy default stream) cannot be a key: the table uses 0 for "empty".
  const uint64_t key = stream == 0 ? ~uint64_t{0} : stream;
  uint64_t h = (key * 0x9E3779B97F4A7C15ull) >> 54;  // 10 bits
  for (int probe = 0; probe < kStreamTable; ++probe) {
    const int i = static_cast<int>((h + static_cast<uint64_t>(probe)) % kStreamTable);
    uint64_t seen = stream_keys_[i].load(std::memory_order_acquire);
    if (seen == key) return static_cast<uint32_t>(i) + 1;
    if (seen == 0) {
      if (stream_keys_[i].compare_exchange_strong(seen, key, std::memory_order_acq_rel) || seen == key) {
        return static_cast<uint32_t>(i) + 1;
      }
    }
  }
  return 0;
}

}  // namespace gs
