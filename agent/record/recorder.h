// recorder.h — where the capture side puts what it caught.
//
// The capture side (shim/ wrappers, agent/cupti/) sees only this interface; the agent core
// implements it with per-thread rings drained by the writer thread. Tests implement it in memory.
//
// Thread safety: every method may be called concurrently from any thread.
// Hot-path promise (RecordApiCall*, RecordHostWait): no allocation, no lock, no syscall, no I/O. When the calling
// thread's ring is full the record is dropped and counted; the call never blocks.
#ifndef GPUSTALL_AGENT_RECORD_RECORDER_H_
#define GPUSTALL_AGENT_RECORD_RECORDER_H_

#include <cstddef>
#include <cstdint>

#include "agent/record/events.h"

namespace gs {

// Where the application made an intercepted call: the return address into its code and the
// stack pointer just before the call pushed it (the wrapper's CFA), read by the wrapper with
// compiler builtins. A recorder may use it to recognise a call from the same site at the same
// stack depth as the thread's previous one (ring_recorder.h, "Stack reuse").
struct CallSite {
  uintptr_t pc = 0;
  uintptr_t cfa = 0;
};

class Recorder {
 public:
  virtual ~Recorder() = default;

  // True while recording (not dormant, not disabled). Cheap: one relaxed atomic load.
  virtual bool enabled() const = 0;

  // Called by a wrapper on the application thread after the real call returned. If
  // `capture_stack` is true the recorder captures the calling thread's stack (native, and Python
  // where present) itself, skipping `skip_frames` frames of the capture side.
  virtual void RecordApiCall(const ApiCallEvent& event, bool capture_stack, int skip_frames) = 0;

  // The same, from a wrapper that knows its caller's call site (shim/). The default ignores it;
  // +1: this forwarding frame.
  virtual void RecordApiCallFrom(const ApiCallEvent& event, bool capture_stack, int skip_frames,
                                 const CallSite& site) {
    (void)site;
    RecordApiCall(event, capture_stack, skip_frames + 1);
  }

  // Called by a blocking-call wrapper (shim/host_wait_interposers.cc) on the application thread
  // after a call that blocked long enough; same stack capture and hot-path promise as
  // RecordApiCallFrom. `any_thread` false: only a thread that already records CUDA calls (one that
  // owns a ring) records its waits, so that threads which never touch CUDA (CUPTI's, the driver's,
  // a library's pool) neither use up the rings nor become sampled; true: every thread. The default
  // drops the record.
  virtual void RecordHostWait(const HostWaitEvent& event, bool capture_stack, int skip_frames,
                              const CallSite& site, bool any_thread) {
    (void)event, (void)capture_stack, (void)skip_frames, (void)site, (void)any_thread;
  }

  // GPU work and CUPTI records, off the application's hot path (CUPTI's buffer thread, the
  // fallback poller). May take locks; copies activity.name before returning.
  virtual void RecordGpuActivity(const GpuActivityEvent& activity) = 0;
  // The same for `count` records at once (a CUPTI buffer's, converted a run at a time): one lock
  // for the run where the recorder takes one. The default records them one by one.
  virtual void RecordGpuActivities(const GpuActivityEvent* activities, size_t count) {
    for (size_t i = 0; i < count; ++i) RecordGpuActivity(activities[i]);
  }

  // Counters the capture side cannot avoid losing (CUPTI's dropped records, fallback overflow).
  virtual void AddDropped(uint64_t cupti_dropped, uint64_t other_dropped) = 0;
  // A CUDA graph node came to be (capture time, CUPTI's thread or the capturing thread).
  virtual void RecordGraphNode(const GraphNodeEvent& node) { (void)node; }

  // A CUDA call seen but deliberately not recorded (shorter than the capture side's threshold),
  // `ns` long: counted so the trace says how much time such calls held.
  virtual void CountUnrecordedCall(uint64_t ns) { (void)ns; }

  // What the capture side could and could not see, written into the trace ("mode").
  // `what` is a short static string, e.g. "cupti" or "interposition: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (held by: nsys)".
  virtual void SetCaptureMode(const char* mode, const char* detail) = 0;
  // Which CUDA the capture side found: the runtime's file name ("libcudart.so.12", "" for none)
  // and, with CUPTI, its CUDA release and cuptiGetVersion (0, 0 without).
  virtual void SetCudaVersions(const char* cuda_runtime, uint32_t cupti_cuda_major, uint32_t cupti_version) {
    (void)cuda_runtime;
    (void)cupti_cuda_major;
    (void)cupti_version;
  }
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_RECORD_RECORDER_H_
