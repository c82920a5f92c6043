// stream_capture.h — whether the application has begun a CUDA stream capture.
//
// Work the agent adds to an application stream (the event-pair fallback's two event records per
// launch, event_pair_timer.h) must never land in a stream that is capturing: there it would
// become nodes of the application's graph (on NVIDIA's runtime) or invalidate its capture (where
// event records are not capturable). Asking the runtime (cudaStreamIsCapturing) before every
// launch would cost every process; so the shim notes the first cudaStreamBeginCapture* it sees
// (CudaApiEffect::kBeginCapture), and only from then on does the fallback ask.
//
// Thread safety: lock-free; a relaxed flag that only ever goes from false to true.
#ifndef GPUSTALL_AGENT_CAPTURE_STREAM_CAPTURE_H_
#define GPUSTALL_AGENT_CAPTURE_STREAM_CAPTURE_H_

#include <atomic>

namespace gs {

namespace stream_capture_internal {
extern std::atomic<bool> g_capture_begun;
}  // namespace stream_capture_internal

// True once the process began a stream capture the shim saw. Never reset: a process that uses
// graphs keeps asking, one that never does never pays.
inline bool StreamCaptureBegun() {
  return stream_capture_internal::g_capture_begun.load(std::memory_order_relaxed);
}
inline void NoteStreamCaptureBegun() {
  stream_capture_internal::g_capture_begun.store(true, std::memory_order_relaxed);
}

}  // namespace gs

#endif  // GPUSTALL_AGENT_CAPTURE_STREAM_CAPTURE_H_
