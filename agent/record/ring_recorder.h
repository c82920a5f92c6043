// ring_recorder.h — the agent's Recorder: per-thread rings for API calls (the hot path), an
// ActivityBuffer for GPU records, and the counters and capture mode the writer reports.
//
// Hot path (RecordApiCall, RecordHostWait: one body, Record()), in order: a thread-local reentrancy flag, the thread's ring pointer
// (thread-local, initial-exec TLS: no allocation even when the library was dlopen'ed), a
// reservation in the ring, one 64-byte copy, the stack captured straight into the ring, then (in
// a CPython process only: one load of the reader's state otherwise) the thread's Python frames
// right after the PCs, a release store. No malloc, lock, syscall or I/O. A thread's FIRST call claims a ring from the
// pool (one CAS scan) and does three once-per-thread things that are not free: gettid (syscall),
// pthread_setspecific (allocates only if the process already used 32+ keys), and with stacks on
// pthread_getattr_np for the stack bounds. Full ring: drop and count, never wait.
//
// Stack reuse: a wrapper that knows its call site (RecordApiCallFrom: the return address into the
// application and the stack pointer before the call) lets a launch loop pay for one unwind per call
// site, not one per call. After an unwind for a known site the thread's ring keeps the PCs (128
// entries, 4 ways in each of 32 sets by site and stack pointer: StackReuseTable) and, for each,
// the stack slot that holds it (found by scanning up from the site's stack pointer: return
// addresses sit on the stack in caller order). The next call from the same
// site at the same stack pointer reuses them if every slot still holds its PC: with the innermost
// frame at the same PC and SP and every caller's return address unchanged at the same place, the
// walk would find the same frames (exact for frames of fixed size; a caller that moved with alloca
// would need stale copies of every return address left at the old slots to be missed). A miss, or a
// PC not found within 256 KiB of stack, unwinds as before. Cost of a hit: a search of a set's 4
// ways, one load and compare per frame; the PCs are not copied into the record, which names its entry
// instead, and the record that filled the entry carries them (kRingFlagStackReused and
// kRingFlagStackDefinesReuse, ring.h; the reader's side: reused_stacks.h). Nothing to invalidate
// on dlopen/dlclose: the reused PCs are exactly the values the unwinder would read from those
// slots. CUPTI's runtime callback (calls that bypass the wrappers, e.g. Python's ctypes) passes its
// own site, the callback's return address into CUPTI's dispatcher and its stack pointer
// (cupti_session.cc); calls without a site (tests) always unwind. Python frames are never reused:
// they are read afresh for every record.
//
// Lifetime: lives in static storage for the life of the process (threads that raced with
// shutdown may still call it). Tests may destroy one once no thread uses it.
//
// Thread safety: all Recorder methods from any thread; SetEnabled from the control path.
#ifndef GPUSTALL_AGENT_RECORD_RING_RECORDER_H_
#define GPUSTALL_AGENT_RECORD_RING_RECORDER_H_

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "agent/record/activity_buffer.h"
#include "agent/record/recorder.h"
#include "agent/record/ring_pool.h"
#include "agent/python/python_stacks.h"
#include "agent/stacks/stack_capture.h"

namespace gs {

// A decoded ring record (what the writer sees): the 64-byte event and the stack captured with it.
template <typename Event>
struct RingRecordView {
  const Event* event;
  const uint64_t* pcs;             // native return addresses, innermost first; nullptr when the
                                   // record reuses its entry's (ReusedStacks::Resolve gives them)
  int pc_count;
  bool truncated;                  // native stack cut at the depth limit
  const PythonFrameRef* python;    // the calling thread's Python frames, innermost first
  int python_count;                // 0: none (not a Python process/thread, or disabled)
  bool python_truncated;
  uint8_t flags;                   // the record's RingRecordFlags
  uint8_t reuse_entry;             // with a stack-reuse flag: the thread's entry it defines or reuses
};
using ApiCallView = RingRecordView<ApiCallEvent>;    // kRingApiCall
using HostWaitView = RingRecordView<HostWaitEvent>;  // kRingHostWait

class RingRecorder final : public Recorder {
 public:
  // At most this many Python frames per record (innermost kept; the record says truncated).
  static constexpr int kMaxPythonFrames = 64;

  // `pool` and `stacks` must outlive the recorder and be initialised. `stack_depth` frames at
  // most per record; `activity_capacity` bounds waiting GPU records. `python` (optional, may be
  // inactive; must outlive the recorder) adds the calling thread's Python frames to every
  // record that captures a stack, as long as python->enabled().
  RingRecorder(RingPool* pool, const StackCapturer* stacks, int stack_depth, size_t activity_capacity,
               PythonStackReader* python = nullptr);
  ~RingRecorder() override;

  // --- Recorder ---
  bool enabled() const override { return enabled_.load(std::memory_order_relaxed); }
  void RecordApiCall(const ApiCallEvent& event, bool capture_stack, int skip_frames) override;
  void RecordApiCallFrom(const ApiCallEvent& event, bool capture_stack, int skip_frames,
                         const CallSite& site) override;
  void RecordHostWait(const HostWaitEvent& event, bool capture_stack, int skip_frames, const CallSite& site,
                      bool any_thread) override;
  void RecordGpuActivity(const GpuActivityEvent& activity) override { RecordGpuActivities(&activity, 1); }
  void RecordGpuActivities(const GpuActivityEvent* activities, size_t count) override;
  void AddDropped(uint64_t cupti_dropped, uint64_t other_dropped) override;
  void RecordGraphNode(const GraphNodeEvent& node) override {
    if (enabled_.load(std::memory_order_relaxed)) activities_.AddGraphNode(node);
  }
  void CountUnrecordedCall(uint64_t ns) override {
    unrecorded_calls_.fetch_add(1, std::memory_order_relaxed);
    unrecorded_call_ns_.fetch_add(ns, std::memory_order_relaxed);
  }
  void SetCaptureMode(const char* mode, const char* detail) override;
  void SetCudaVersions(const char* cuda_runtime, uint32_t cupti_cuda_major, uint32_t cupti_version) override;

  // --- control path ---
  void SetEnabled(bool enabled) { enabled_.store(enabled, std::memory_order_relaxed); }
  // Drops every record still waiting in the rings and the activity buffer: records that threads
  // left between on-demand windows (a call in flight when the last window stopped) belong to no
  // window. Only while no writer thread runs (it takes the consumer side of the rings).
  void DiscardPending();

  // --- writer side ---
  RingPool& pool() { return *pool_; }
  // A new reader of the rings (a writer: each trace, each on-demand window, a forked child's) has
  // seen no record that filled a reuse entry: every thread's next call from a known site unwinds
  // and fills its entry again, so that its reused records name PCs this reader has
  // (reused_stacks.h). Only while no thread records (before its first record, between windows,
  // in a forked child): a record in flight may still name the entry as it was.
  void NewReuseEpoch() { reuse_epoch_.fetch_add(1, std::memory_order_relaxed); }
  // The Python reader given at construction (nullptr if none).
  PythonStackReader* python() const { return python_; }
  ActivityBuffer& activities() { return activities_; }
  int stack_depth() const { return depth_; }
  uint64_t cupti_dropped() const { return cupti_dropped_.load(std::memory_order_relaxed); }
  uint64_t other_dropped() const { return other_dropped_.load(std::memory_order_relaxed); }
  uint64_t unrecorded_calls() const { return unrecorded_calls_.load(std::memory_order_relaxed); }
  uint64_t unrecorded_call_ns() const { return unrecorded_call_ns_.load(std::memory_order_relaxed); }
  // The capture mode and CUDA versions, if they changed since the last call (false otherwise).
  struct CaptureMode {
    std::string mode, detail, cuda_runtime;
    uint32_t cupti_cuda_major = 0, cupti_version = 0;
  };
  bool TakeCaptureMode(CaptureMode* out);
  // True while the calling thread is inside a Record* call (its reentrancy flag). For the
  // sampler's signal handler: a sample that interrupts a record must not unwind or walk Python
  // frames on top of it (libunwind's per-thread cache is not reentrant). Async-signal-safe.
  static bool CallingThreadInRecord();
  // True when the calling thread holds a ring (it has recorded a call, of this recorder or, before
  // a fork reset, an older one: Record* still checks which). For the blocking-call wrappers
  // (shim/host_wait_call.h): a thread without one records no waits unless every thread is traced,
  // so it need not time its calls at all. Async-signal-safe: one TLS load.
  static bool CallingThreadHasRing();
  // Decodes a kRingApiCall record in place.
  static ApiCallView View(const RingRecordHeader& record) { return ViewAs<ApiCallEvent>(record); }
  // Decodes a kRingHostWait record in place.
  static HostWaitView ViewHostWait(const RingRecordHeader& record) { return ViewAs<HostWaitEvent>(record); }

 private:
  template <typename Event>
  static RingRecordView<Event> ViewAs(const RingRecordHeader& record);
  // The body of every Record* entry point, inlined into each (so skip_frames counts the same):
  // `event` is the record's 64-byte event of `type`. `claim_ring` false: a thread without a ring
  // records nothing (RecordHostWait's any_thread).
  __attribute__((always_inline)) inline void Record(RingRecordType type, const void* event, bool capture_stack,
                                                    int skip_frames, const CallSite* site, bool claim_ring);
  ThreadRing* ClaimRing();
  ThreadRing* ClaimRingUnguarded();

  RingPool* pool_;
  const StackCapturer* stacks_;
  PythonStackReader* const python_;
  const int depth_;
  const uint64_t generation_;  // tells a thread's cached ring pointer from an older recorder's
  std::atomic<uint32_t> reuse_epoch_{1};  // reuse entries of an older epoch are empty (NewReuseEpoch)
  pthread_key_t exit_key_{};
  bool has_exit_key_ = false;
  std::atomic<bool> enabled_{true};
  ActivityBuffer activities_;
  std::atomic<uint64_t> cupti_dropped_{0};
  std::atomic<uint64_t> other_dropped_{0};
  std::atomic<uint64_t> unrecorded_calls_{0};
  std::atomic<uint64_t> unrecorded_call_ns_{0};
  std::mutex mode_mu_;
  CaptureMode mode_;           // guarded by mode_mu_
  bool mode_changed_ = false;  // guarded by mode_mu_
};

template <typename Event>
RingRecordView<Event> RingRecorder::ViewAs(const RingRecordHeader& record) {
  static_assert(sizeof(Event) == 64, "ring records carry a 64-byte event");
  static_assert(sizeof(PythonFrameRef) == sizeof(uint64_t), "Python frames take one PC slot each");
  constexpr size_t kHeaderBytes = sizeof(RingRecordHeader) + sizeof(Event);
  const uint8_t* base = reinterpret_cast<const uint8_t*>(&record);
  const size_t words = (record.size - kHeaderBytes) / sizeof(uint64_t);
  const bool reused = (record.flags & kRingFlagStackReused) != 0;
  const size_t stored = reused ? 0 : record.count;
  const int python_count = words > stored ? static_cast<int>(words - stored) : 0;
  return RingRecordView<Event>{reinterpret_cast<const Event*>(base + sizeof(RingRecordHeader)),
                               reused ? nullptr : reinterpret_cast<const uint64_t*>(base + kHeaderBytes),
                               record.count,
                               (record.flags & kRingFlagStackTruncated) != 0,
                               reinterpret_cast<const PythonFrameRef*>(base + kHeaderBytes +
                                                                       stored * sizeof(uint64_t)),
                               python_count,
                               (record.flags & kRingFlagPythonTruncated) != 0,
                               record.flags,
                               record.reuse_entry};
}

}  // namespace gs

#endif  // GPUSTALL_AGENT_RECORD_RING_RECORDER_H_
