// event_pair_timer.h — GPU timing without CUPTI: the agent records a pair of CUDA events around
// each piece of GPU work the shim intercepts, on the application's own stream, and later turns the
// completed pair into a GpuActivityEvent (ActivitySource::kEventPair). This is HPCToolkit's CPU–GPU
// blame-shifting technique; it sees only what the interposers see (no static runtimes, no work
// inside cuBLAS/cuDNN/NCCL), and the trace's capture mode says so.
//
// Clock mapping: per device the agent keeps a reference event recorded on its own non-blocking
// stream at a known host time (CLOCK_MONOTONIC at the middle of the record call, retried until
// that call took under 50 µs: the device stamps an event on an idle stream when it is submitted). A pair's times are reference + cudaEventElapsedTime(reference, event).
// Elapsed times are floats in ms (about 0.5 µs resolution), so the reference is renewed every
// couple of seconds to keep float rounding far below a microsecond.
//
// Threads: BeforeGpuWork/AfterGpuWork run on application threads (inside the shim's wrapper) and
// touch only the slot they claimed (lock-free claim). Poll runs on the timer's poller thread and on
// whoever calls Flush; slots are claimed for conversion with a CAS, so both may poll at once.
// The real runtime functions are called directly (never through the shim). A full slot pool is
// counted (overflowed) and the work goes untimed.
#ifndef GPUSTALL_AGENT_CAPTURE_EVENT_PAIR_TIMER_H_
#define GPUSTALL_AGENT_CAPTURE_EVENT_PAIR_TIMER_H_

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>

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
  // only once work has been timed). Returns false if the runtime lacks event support.
  bool Start(Recorder& recorder);
  // On the application thread, right before the real call that puts work on `stream`.
  void BeforeGpuWork(uint64_t stream);
  // Right after it; `call` describes the work (class, bytes, kinds); a failed call frees the slot.
  void AfterGpuWork(uint64_t stream, uint32_t correlation_id, const ApiCallEvent& call);
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

  // The agent's small stream id for a cudaStream_t (GpuActivityEvent.stream_id in this mode): stable for
  // the life of the process, 1-based; 0 if the table is full.
  uint32_t StreamId(uint64_t stream);

 private:
  enum SlotState : uint32_t { kFree = 0, kClaimed = 1, kInFlight = 2, kConverting = 3 };
  struct Slot {
    std::atomic<uint32_t> state{kFree};
    cudaEvent_t start = nullptr;
    cudaEvent_t end = nullptr;
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
  };
  struct Runtime;  // the real functions

  bool EnsureDevice(int device);
  bool TakeReference(int device, int index);
  void PollerLoop();
  bool Convert(int device, Slot& slot, bool forced);

  const Runtime* rt_ = nullptr;
  Recorder* recorder_ = nullptr;
  Device* devices_ = nullptr;  // kMaxDevices, allocated at Start, freed only by the destructor
  std::atomic<bool> running_{false};
  std::atomic<bool> stop_{false};
  std::atomic<int> in_flight_{0};
  std::atomic<uint64_t> overflowed_{0};
  std::atomic<uint64_t> failed_{0};
  std::atomic<uint64_t> capturing_{0};
  std::mutex poll_mutex_;  // serialises reference renewal (not the per-slot conversion)
  std::thread* poller_ = nullptr;
  static constexpr int kStreamTable = 1024;
  std::atomic<uint64_t> stream_keys_[kStreamTable] = {};
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_CAPTURE_EVENT_PAIR_TIMER_H_
