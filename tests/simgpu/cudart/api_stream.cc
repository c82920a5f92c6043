// api_stream.cc — creating and destroying streams and events; event queries and waits.
#include "cudart/api_call.h"
#include "cudart/driver_calls.h"

using simgpu::ApiCall;

namespace {

cudaError_t Create(ApiCall& call, cudaStream_t* out, unsigned flags, int priority) {
  if (out == nullptr) return cudaErrorInvalidValue;
  if (flags & ~static_cast<unsigned>(cudaStreamNonBlocking)) return cudaErrorInvalidValue;
  // Priorities are clamped to the range cudaDeviceGetStreamPriorityRange reports (0..-5).
  priority = priority > 0 ? 0 : (priority < -5 ? -5 : priority);
  *out = simgpu::StreamHandle(
      simgpu::CreateStream(call.device(), flags, priority, call.correlation_id()));
  return cudaSuccess;
}

simgpu::Event* AsEvent(cudaEvent_t e) {
  auto* ev = reinterpret_cast<simgpu::Event*>(e);
  return simgpu::IsEvent(ev) ? ev : nullptr;
}

}  // namespace

extern "C" {

cudaError_t cudaStreamCreate(cudaStream_t* pStream) {
  SG_API(cudaStreamCreate_v3020, pStream);
  return call.Finish(Create(call, pStream, cudaStreamDefault, 0));
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* pStream, unsigned int flags) {
  SG_API(cudaStreamCreateWithFlags_v5000, pStream, flags);
  return call.Finish(Create(call, pStream, flags, 0));
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t* pStream, unsigned int flags, int priority) {
  SG_API(cudaStreamCreateWithPriority_v5050, pStream, flags, priority);
  return call.Finish(Create(call, pStream, flags, priority));
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  SG_API(cudaStreamDestroy_v5050, stream);
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) {
    return call.Finish(cudaErrorInvalidResourceHandle);
  }
  simgpu::Stream* s = simgpu::ResolveStream(call.device(), stream, false);
  if (s == nullptr) return call.Finish(cudaErrorInvalidResourceHandle);
  simgpu::DestroyStream(s);  // returns at once; queued work still completes
  return call.Finish(cudaSuccess);
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  SG_API(cudaEventCreate_v3020, event);
  if (event == nullptr) return call.Finish(cudaErrorInvalidValue);
  *event = reinterpret_cast<cudaEvent_t>(simgpu::CreateEvent(call.device(), cudaEventDefault));
  return call.Finish(cudaSuccess);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  SG_API(cudaEventCreateWithFlags_v3020, event, flags);
  if (event == nullptr) return call.Finish(cudaErrorInvalidValue);
  *event = reinterpret_cast<cudaEvent_t>(simgpu::CreateEvent(call.device(), flags));
  return call.Finish(cudaSuccess);
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  SG_API(cudaEventDestroy_v3020, event);
  simgpu::Event* e = AsEvent(event);
  if (e == nullptr) return call.Finish(cudaErrorInvalidResourceHandle);
  simgpu::DestroyEvent(e);
  return call.Finish(cudaSuccess);
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  SG_API(cudaEventQuery_v3020, event);
  return call.Finish(simgpu::NestedEventQuery(event, call.device(), [&]() -> cudaError_t {
    simgpu::Event* e = AsEvent(event);
    if (e == nullptr) return cudaErrorInvalidResourceHandle;
    return simgpu::QueryEvent(e);
  }));
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  SG_API(cudaEventSynchronize_v3020, event);
  return call.Finish(simgpu::NestedEventSynchronize(event, call.device(), [&]() -> cudaError_t {
    simgpu::Event* e = AsEvent(event);
    if (e == nullptr) return cudaErrorInvalidResourceHandle;
    uint64_t start = simgpu::NowNs();
    cudaError_t r = simgpu::SynchronizeEvent(e);
    simgpu::RecordSync(1 /* EVENT_SYNCHRONIZE */, call.device(), nullptr, e, start,
                       simgpu::NowNs(), call.correlation_id());
    return r;
  }));
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  SG_API(cudaEventElapsedTime_v12080, ms, start, end);
  simgpu::Event* a = AsEvent(start);
  simgpu::Event* b = AsEvent(end);
  if (ms == nullptr) return call.Finish(cudaErrorInvalidValue);
  if (a == nullptr || b == nullptr) return call.Finish(cudaErrorInvalidResourceHandle);
  return call.Finish(simgpu::EventElapsedMs(a, b, ms));
}

}  // extern "C"
