// event_pair_timer.h — GPU timing without CUPTI: the agent records CUDA events on the application's
// own stream around each piece of GPU work the shim intercepts, and later turns them into a
// GpuActivityEvent (ActivitySource::kEventPair). This is HPCToolkit's CPU–GPU blame-shifting
// technique; it sees only what the interposers see (no static runtimes, no work inside
// cuBLAS/cuDNN/NCCL), and the trace's capture mode says so.
//
// One event per piece of work where stream order allows it, a pair where it does not. Every piece
// of work gets an end event recorded right after the call that submits it. A start event is
// recorded before it too unless the last work the whole process timed was this thread's, on this
// same stream, and no stream wait (cudaStreamWaitEvent) came since: then the work is "chained",
// it begins when both its call has entered and that previous work has ended, start = max(call
// entry, previous end). A start event would say no more: on a stream that is still busy it is
// stamped when the previous work ends, on an idle one when it is submitted, which is inside the
// call. Anything else may put other work or a wait in between (another stream, with which the
// legacy default stream synchronises; another thread's work on a shared stream, whose end event
// can land after ours), so it gets a start event. When another thread's timed work got onto the
// stream between ours anyway (its claim came before ours, its submission after), the chained start
// is early, never late: the previous end is our own work's. Work the interposers cannot see on the
// same stream (a library's own kernels, a host function) is counted as part of the next chained
// work instead of showing as an idle gap: the device was busy, the time goes to the wrong kernel.
// Launch-bound loops on one stream thus cost one event record per launch instead of two.
//
// Clock mapping: per device the agent keeps a reference event recorded on its own non-blocking
// stream at a known host time (CLOCK_MONOTONIC at the middle of the record call, retried until
// that call took under 50 µs: the device stamps an event on an idle stream when it is submitted).
// An event's time is reference + cudaEventElapsedTime(reference, event); a call's entry time is
// already CLOCK_MONOTONIC. Elapsed times are floats in ms (about 0.5 µs resolution), so the
// reference is renewed every couple of seconds to keep float rounding far below a microsecond.
//
// Threads: BeforeGpuWork/AfterGpuWork run on application threads (inside the shim's wrapper) and
// touch only the slot they claimed (lock-free claim) and one atomic (the last timed stream). Poll
// runs on the timer's poller thread ("gpustall-events") and on whoever calls Flush, one at a
// time. It converts each chain's work (one thread's on one stream, numbered in the order the
// thread put it in flight) in that order, so each chained start finds its predecessor's end, and
// holds back work whose predecessor it has not converted yet (not yet in flight when its slot was
// passed). It asks a chain's end events from the newest back and stops at the first that has
// completed: stream order says every earlier one has (a launch-bound loop's poll asks one event,
// not hundreds). The real runtime functions are called directly (never through the shim). A full
// slot pool is counted (overflowed) and the work goes untimed.
#ifndef GPUSTALL_AGENT_CAPTURE_EVENT_PAIR_TIMER_H_
#define GPUSTALL_AGENT_CAPTURE_EVENT_PAIR_TIMER_H_

#include <cuda_runtime_api.h>
#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <mutex>

#include "agent/capture/cuda_api/cuda_api.h"
#include "agent/record/events.h"
#include "agent/record/recorder.h"

namespace gs {

class EventPairTimer {
 public:
  static constexpr int kMaxDevices = 8;
  static constexpr int kSlotsPerDevice = 1024;
  static constexpr int kReferences = 8;          // per device, renewed round robin
  static constexpr uint64_t kReferencePeriodNs = 2'000'000'000;

  EventPairTimer() = default;
  // The agent never destroys its timer (application threads may still be inside a timed call at
  // exit); a test does: stop, then free what Start allocated.
  ~EventPairTimer();
  EventPairTimer(const EventPairTimer&) = delete;
  EventPairTimer& operator=(const EventPairTimer&) = delete;

  // Resolves the runtime's event functions and starts the poller thread (which makes CUDA calls
  // only once work has been timed; a test that polls alone starts none). Returns false if the
  // runtime lacks event support.
  bool Start(Recorder& recorder, bool poller_thread = true);
  // On the application thread, right before the real call that puts work on `stream`.
  void BeforeGpuWork(uint64_t stream);
  // Right after it; `call` describes the work (class, bytes, kinds, entry time), `launch` a
  // kernel's configuration (or nullptr); a failed call frees the slot.
  void AfterGpuWork(uint64_t stream, uint32_t correlation_id, const ApiCallEvent& call,
                    const KernelLaunchShape* launch = nullptr);
  // Before the real call of a stream-wait (cudaStreamWaitEvent): the next work on any stream gets
  // a start event, since what it waits for is no longer its stream's previous timed work.
  void OnStreamWait();
  // Converts completed pairs. `forced` waits for pending ones (exit, exec).
  void Poll(bool forced);
  // Final forced poll; stops the poller thread.
  void Stop();
  // In a forked child: the poller thread is gone and the parent's events are meaningless here.
  void OnForkChild();

  bool running() const { return running_.load(std::memory_order_acquire); }
  uint64_t overflowed() const { return overflowed_.load(std::memory_order_relaxed); }
  uint64_t failed() const { return failed_.load(std::memory_order_relaxed); }
  // Launches left untimed because their stream was capturing (stream_capture.h): their work runs
  // only when the graph is launched.
  uint64_t capturing() const { return capturing_.load(std::memory_order_relaxed); }
  // Pieces of work timed with their end event alone (chained to their stream's previous work).
  uint64_t chained() const { return chained_.load(std::memory_order_relaxed); }
  // End events asked (cudaEventQuery or, forced, cudaEventSynchronize) by the polls so far: about
  // one a chain a poll, not one a piece of work.
  uint64_t asked() const { return asked_.load(std::memory_order_relaxed); }

  // The agent's small stream id for a cudaStream_t (GpuActivityEvent.stream_id in this mode): stable for
  // the life of the process, 1-based; 0 if the table is full.
  uint32_t StreamId(uint64_t stream);

 private:
  enum SlotState : uint32_t { kFree = 0, kClaimed = 1, kInFlight = 2, kConverting = 3 };
  struct Slot {
    std::atomic<uint32_t> state{kFree};
    cudaEvent_t start = nullptr;  // recorded only when the work is not chained
    cudaEvent_t end = nullptr;
    bool chained = false;
    uint64_t chain = 0;           // its thread's number above its StreamId (kChainStreamBits), or 0
    uint64_t sequence = 0;        // its thread's count of work put in flight, this one included
    uint64_t predecessor = 0;     // chained: the sequence of the chain's work before it, or 0
    uint64_t entry_ns = 0;        // the submitting call's entry (CLOCK_MONOTONIC)
    int reference = 0;            // index into the device's references
    uint32_t reference_generation = 0;
    // Host time by which the work was certainly complete (a synchronous copy to host memory has
    // finished when the call returns), or UINT64_MAX. The end event can land later than the work
    // when other threads queue work on a shared stream (the legacy default stream) in between.
    uint64_t end_bound_ns = 0;
    GpuActivityEvent activity{};       // everything but the times
  };
  struct Reference {
    cudaEvent_t event = nullptr;
    uint64_t host_ns = 0;
    std::atomic<uint32_t> generation{0};
  };
  struct Device {
    std::atomic<bool> ready{false};
    std::mutex init_mutex;        // first use only (creating the stream and first reference)
    cudaStream_t stream = nullptr;  // the agent's own non-blocking stream
    Reference references[kReferences];
    std::atomic<int> current{0};
    Slot slots[kSlotsPerDevice];
    int in_flight[kSlotsPerDevice];  // Poll's scratch: the slots in flight, by chain and sequence
    uint8_t asked[kSlotsPerDevice];  // ConvertChain's, beside in_flight: what each ask found
  };
  struct Runtime;  // the real functions

  bool EnsureDevice(int device);
  bool TakeReference(int device, int index);
  static void* PollerMain(void* self);
  void PollerLoop();
  enum class Resolution { kPending, kResolved, kFailed };
  enum : uint8_t { kUnasked, kAskedResolved, kAskedNot };
  // Reads a slot whose end event has completed into its activity's times (the start too when the
  // slot has a start event) and keeps it claimed for Finish; a failed read frees it. `complete`:
  // stream order already says the end event has completed (a later one of its chain has), so it
  // is not asked (a forced poll does not wait for it either).
  Resolution Resolve(int device, Slot& slot, bool forced, bool complete);
  // The slots [first, last) of d.in_flight, one chain's in sequence order: asked from the newest
  // back until one has completed, which all before it then have. Finishes each in order; one
  // whose predecessor in the chain is not converted yet waits for the next poll.
  void ConvertChain(int device, const int* first, const int* last, bool forced);
  // Dates a chained start from its chain's previous end, records the activity, frees the slot;
  // or, when that end is not converted yet, puts the slot back in flight.
  void Finish(Slot& slot);
  // The slot's chain's last converted work is now this one, ending at end_ns (0: unknown).
  void AdvanceChainEnd(const Slot& slot, uint64_t end_ns);
  static int ChainEndIndex(uint64_t chain) {
    return static_cast<int>((chain * 0x9E3779B97F4A7C15ull) >> 52);  // 12 bits: kChainEnds
  }

  const Runtime* rt_ = nullptr;
  Recorder* recorder_ = nullptr;
  Device* devices_ = nullptr;  // kMaxDevices, allocated at Start, freed only by the destructor
  std::atomic<bool> running_{false};
  std::atomic<bool> stop_{false};
  std::atomic<int> in_flight_{0};
  std::atomic<uint64_t> overflowed_{0};
  std::atomic<uint64_t> failed_{0};
  std::atomic<uint64_t> capturing_{0};
  std::atomic<uint64_t> chained_{0};
  std::atomic<uint64_t> asked_{0};
  // The chain (thread and stream) of the last work the process timed; 0 after a stream wait or
  // untimed work.
  std::atomic<uint64_t> chain_key_{0};
  std::mutex poll_mutex_;  // serialises reference renewal (not the per-slot conversion)
  pthread_t poller_{};  // "gpustall-events"
  bool poller_started_ = false;
  static constexpr int kStreamTable = 1024;
  static constexpr int kChainStreamBits = 11;  // a chain's low bits: the StreamId
  std::atomic<uint64_t> stream_keys_[kStreamTable] = {};
  // The end of each chain's last converted work and its sequence, direct-mapped by chain (a chain
  // whose entry was taken by another has no known end: its next start is its call's entry; an
  // end_ns of 0: that work's times could not be read). Poll only.
  struct ChainEnd {
    uint64_t chain = 0;
    uint64_t sequence = 0;
    uint64_t end_ns = 0;
  };
  static constexpr int kChainEnds = 4096;
  ChainEnd chain_ends_[kChainEnds] = {};
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_CAPTURE_EVENT_PAIR_TIMER_H_
