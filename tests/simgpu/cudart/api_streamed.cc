// api_streamed.cc — the APIs that take a stream (or use the default one).
//
// Compiled twice: plainly (stream 0 = the legacy default stream) and with
// CUDA_API_PER_THREAD_DEFAULT_STREAM + SIMGPU_PTDS_UNIT, where cuda_runtime_api.h renames each
// function to its _ptds/_ptsz name, stream 0 means the calling thread's default stream, and
// SG_PT picks the matching CUPTI cbid and params struct.
#include <dlfcn.h>

#include "cudart/abi13.h"
#include "cudart/api_call.h"
#include "cudart/driver_calls.h"
#include "cudart/launch.h"

using simgpu::ApiCall;

namespace {

simgpu::Stream* Resolve(ApiCall& call, cudaStream_t stream) {
  return simgpu::ResolveStream(call.device(), stream, simgpu::kPerThreadDefaultStream);
}

cudaError_t Copy(ApiCall& call, cudaStream_t stream, const simgpu::CopyArgs& a) {
  auto work = [&]() -> cudaError_t {
    simgpu::Stream* s = Resolve(call, stream);
    if (s == nullptr) return cudaErrorInvalidResourceHandle;
    bool wait = false;
    std::shared_ptr<simgpu::OpHandle> op;
    cudaError_t e = simgpu::SubmitCopy(s, a, call.correlation_id(), &wait, &op);
    if (e == cudaSuccess && wait) e = simgpu::WaitOp(op);
    return e;
  };
  if (a.height != 1) return work();  // 2-D copies: no nested driver call modelled
  return simgpu::NestedCopy(a.dst, a.src, a.width, a.async, stream,
                            simgpu::kPerThreadDefaultStream, call.device(), work);
}

cudaError_t Memset(ApiCall& call, cudaStream_t stream, void* dst, int value, size_t width,
                   size_t height, size_t pitch, bool async) {
  auto work = [&]() -> cudaError_t {
    simgpu::Stream* s = Resolve(call, stream);
    if (s == nullptr) return cudaErrorInvalidResourceHandle;
    bool wait = false;
    std::shared_ptr<simgpu::OpHandle> op;
    cudaError_t e = simgpu::SubmitMemset(s, dst, value, width, height, pitch, async,
                                         call.correlation_id(), &wait, &op);
    if (e == cudaSuccess && wait) e = simgpu::WaitOp(op);
    return e;
  };
  if (height != 1) return work();  // 2-D memsets: no nested driver call modelled
  return simgpu::NestedMemset(dst, value, width, async, stream, simgpu::kPerThreadDefaultStream,
                              call.device(), work);
}

// A copy to or from a __device__/__constant__ variable, `offset` bytes into it.
cudaError_t SymbolCopy(ApiCall& call, cudaStream_t stream, const void* symbol, size_t count,
                       size_t offset, cudaMemcpyKind kind, bool to_symbol, void* host,
                       bool async) {
  void* dev = nullptr;
  size_t size = 0;
  cudaError_t e = simgpu::SymbolAddress(symbol, &dev, &size);
  if (e != cudaSuccess) return e;
  if (offset > size || count > size - offset) return cudaErrorInvalidValue;
  char* at = static_cast<char*>(dev) + offset;
  if (to_symbol) {
    if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice &&
        kind != cudaMemcpyDefault) {
      return cudaErrorInvalidMemcpyDirection;
    }
    return Copy(call, stream, {at, host, count, 1, 0, 0, kind, async});
  }
  if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice &&
      kind != cudaMemcpyDefault) {
    return cudaErrorInvalidMemcpyDirection;
  }
  return Copy(call, stream, {host, at, count, 1, 0, 0, kind, async});
}

// cudaGetDriverEntryPoint(ByVersion): as cudart does, ask the driver — libcuda.so.1's
// cuGetProcAddress_v2, found with dlopen (the runtime has no link-time dependency on the driver).
// Its call is reported as a driver call nested in this runtime call.
cudaError_t DriverEntryPoint(const char* symbol, void** func, unsigned version,
                             unsigned long long flags, cudaDriverEntryPointQueryResult* status) {
  if (symbol == nullptr || func == nullptr) return cudaErrorInvalidValue;
  if ((flags & ~3ull) != 0) return cudaErrorInvalidValue;
  // cudaEnableDefault: per-thread in a per-thread-default-stream build, else legacy.
  if ((flags & 3ull) == 0) flags = simgpu::kPerThreadDefaultStream ? 2 : 1;
  using GetProcAddress = int (*)(const char*, void**, int, unsigned long long, int*);
  static GetProcAddress get = [] {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    return lib ? reinterpret_cast<GetProcAddress>(dlsym(lib, "cuGetProcAddress_v2")) : nullptr;
  }();
  if (get == nullptr) return cudaErrorNotSupported;
  int driver_status = 0;
  // cudaEnable* flags have CU_GET_PROC_ADDRESS_*'s values; so do the query results.
  get(symbol, func, static_cast<int>(version), flags, &driver_status);
  if (status != nullptr) *status = static_cast<cudaDriverEntryPointQueryResult>(driver_status);
  return cudaSuccess;  // not found: *func = NULL, status says why (runtime API reference)
}

}  // namespace

extern "C" {

cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long flags,
                                    cudaDriverEntryPointQueryResult* driverStatus) {
  SG_API(SG_PT(cudaGetDriverEntryPoint_v11030, cudaGetDriverEntryPoint_ptsz_v11030), symbol,
         funcPtr, flags, driverStatus);
  return call.Finish(DriverEntryPoint(symbol, funcPtr, CUDART_VERSION, flags, driverStatus));
}

cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr,
                                             unsigned int cudaVersion, unsigned long long flags,
                                             cudaDriverEntryPointQueryResult* driverStatus) {
  SG_API(SG_PT(cudaGetDriverEntryPointByVersion_v12050, cudaGetDriverEntryPointByVersion_ptsz_v12050),
         symbol, funcPtr, cudaVersion, flags, driverStatus);
  return call.Finish(DriverEntryPoint(symbol, funcPtr, cudaVersion, flags, driverStatus));
}

cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, size_t count, size_t offset,
                               cudaMemcpyKind kind) {
  SG_API(SG_PT(cudaMemcpyToSymbol_v3020, cudaMemcpyToSymbol_ptds_v7000), symbol, src, count,
         offset, kind);
  return call.Finish(SymbolCopy(call, nullptr, symbol, count, offset, kind, true,
                                const_cast<void*>(src), false));
}

cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t count, size_t offset,
                                 cudaMemcpyKind kind) {
  SG_API(SG_PT(cudaMemcpyFromSymbol_v3020, cudaMemcpyFromSymbol_ptds_v7000), dst, symbol, count,
         offset, kind);
  return call.Finish(SymbolCopy(call, nullptr, symbol, count, offset, kind, false, dst, false));
}

cudaError_t cudaMemcpyToSymbolAsync(const void* symbol, const void* src, size_t count,
                                    size_t offset, cudaMemcpyKind kind, cudaStream_t stream) {
  SG_API(SG_PT(cudaMemcpyToSymbolAsync_v3020, cudaMemcpyToSymbolAsync_ptsz_v7000), symbol, src,
         count, offset, kind, stream);
  return call.Finish(SymbolCopy(call, stream, symbol, count, offset, kind, true,
                                const_cast<void*>(src), true));
}

cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t count, size_t offset,
                                      cudaMemcpyKind kind, cudaStream_t stream) {
  SG_API(SG_PT(cudaMemcpyFromSymbolAsync_v3020, cudaMemcpyFromSymbolAsync_ptsz_v7000), dst,
         symbol, count, offset, kind, stream);
  return call.Finish(SymbolCopy(call, stream, symbol, count, offset, kind, false, dst, true));
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* pCaptureStatus) {
  SG_API(SG_PT(cudaStreamIsCapturing_v10000, cudaStreamIsCapturing_ptsz_v10000), stream,
         pCaptureStatus);
  if (pCaptureStatus == nullptr) return call.Finish(cudaErrorInvalidValue);
  simgpu::Stream* s = Resolve(call, stream);
  if (s == nullptr) return call.Finish(cudaErrorInvalidResourceHandle);
  *pCaptureStatus = static_cast<cudaStreamCaptureStatus>(simgpu::CaptureStatus(s, nullptr));
  return call.Finish(cudaSuccess);
}

// Stream capture and graph launch (driver/graphs.cc says what is modelled).
cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
  SG_API(SG_PT(cudaStreamBeginCapture_v10000, cudaStreamBeginCapture_ptsz_v10000), stream, mode);
  simgpu::Stream* s = Resolve(call, stream);
  if (s == nullptr) return call.Finish(cudaErrorInvalidResourceHandle);
  return call.Finish(simgpu::BeginCapture(s, mode));
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* pGraph) {
  SG_API(SG_PT(cudaStreamEndCapture_v10000, cudaStreamEndCapture_ptsz_v10000), stream, pGraph);
  if (pGraph == nullptr) return call.Finish(cudaErrorInvalidValue);
  simgpu::Stream* s = Resolve(call, stream);
  if (s == nullptr) return call.Finish(cudaErrorInvalidResourceHandle);
  simgpu::Graph* g = nullptr;
  const cudaError_t e = simgpu::EndCapture(s, &g);
  *pGraph = reinterpret_cast<cudaGraph_t>(g);
  return call.Finish(e);
}

cudaError_t SG_ABI13(cudaStreamGetCaptureInfo)(cudaStream_t stream, cudaStreamCaptureStatus* captureStatus_out,
                                     unsigned long long* id_out, cudaGraph_t* graph_out,
                                     const cudaGraphNode_t** dependencies_out,
                                     const cudaGraphEdgeData** edgeData_out,
                                     size_t* numDependencies_out) {
  SG_API(SG_PT(cudaStreamGetCaptureInfo_v12030, cudaStreamGetCaptureInfo_ptsz_v12030), stream,
         captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out, numDependencies_out);
  if (captureStatus_out == nullptr) return call.Finish(cudaErrorInvalidValue);
  simgpu::Stream* s = Resolve(call, stream);
  if (s == nullptr) return call.Finish(cudaErrorInvalidResourceHandle);
  unsigned long long id = 0;
  const int status = simgpu::CaptureStatus(s, &id);
  *captureStatus_out = static_cast<cudaStreamCaptureStatus>(status);
  if (id_out != nullptr) *id_out = id;
  // The graph under capture; its dependency set is not modelled (an empty set).
  if (graph_out != nullptr) {
    *graph_out = status == cudaStreamCaptureStatusNone ? nullptr
                                                       : reinterpret_cast<cudaGraph_t>(simgpu::CapturingGraph(s));
  }
  if (dependencies_out != nullptr) *dependencies_out = nullptr;
  if (edgeData_out != nullptr) *edgeData_out = nullptr;
  if (numDependencies_out != nullptr) *numDependencies_out = 0;
  return call.Finish(cudaSuccess);
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream) {
  SG_API(SG_PT(cudaGraphLaunch_v10000, cudaGraphLaunch_ptsz_v10000), graphExec, stream);
  auto* exec = reinterpret_cast<simgpu::GraphExec*>(graphExec);
  if (exec == nullptr || !simgpu::IsGraphExec(exec)) return call.Finish(cudaErrorInvalidValue);
  simgpu::Stream* s = Resolve(call, stream);
  if (s == nullptr) return call.Finish(cudaErrorInvalidResourceHandle);
  return call.Finish(simgpu::LaunchGraph(exec, s, call.correlation_id()));
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  SG_API(SG_PT(cudaMemcpy_v3020, cudaMemcpy_ptds_v7000), dst, src, count, kind);
  return call.Finish(Copy(call, nullptr, {dst, src, count, 1, 0, 0, kind, false}));
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  SG_API(SG_PT(cudaMemcpyAsync_v3020, cudaMemcpyAsync_ptsz_v7000), dst, src, count, kind, stream);
  return call.Finish(Copy(call, stream, {dst, src, count, 1, 0, 0, kind, true}));
}

cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                         size_t height, cudaMemcpyKind kind) {
  SG_API(SG_PT(cudaMemcpy2D_v3020, cudaMemcpy2D_ptds_v7000), dst, dpitch, src, spitch, width,
         height, kind);
  if (height > 1 && (dpitch < width || spitch < width)) {
    return call.Finish(cudaErrorInvalidPitchValue);
  }
  return call.Finish(Copy(call, nullptr, {dst, src, width, height, dpitch, spitch, kind, false}));
}

cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch,
                              size_t width, size_t height, cudaMemcpyKind kind,
                              cudaStream_t stream) {
  SG_API(SG_PT(cudaMemcpy2DAsync_v3020, cudaMemcpy2DAsync_ptsz_v7000), dst, dpitch, src, spitch,
         width, height, kind, stream);
  if (height > 1 && (dpitch < width || spitch < width)) {
    return call.Finish(cudaErrorInvalidPitchValue);
  }
  return call.Finish(Copy(call, stream, {dst, src, width, height, dpitch, spitch, kind, true}));
}

cudaError_t cudaMemset(void* devPtr, int value, size_t count) {
  SG_API(SG_PT(cudaMemset_v3020, cudaMemset_ptds_v7000), devPtr, value, count);
  return call.Finish(Memset(call, nullptr, devPtr, value, count, 1, 0, false));
}

cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream) {
  SG_API(SG_PT(cudaMemsetAsync_v3020, cudaMemsetAsync_ptsz_v7000), devPtr, value, count, stream);
  return call.Finish(Memset(call, stream, devPtr, value, count, 1, 0, true));
}

cudaError_t cudaMemset2D(void* devPtr, size_t pitch, int value, size_t width, size_t height) {
  SG_API(SG_PT(cudaMemset2D_v3020, cudaMemset2D_ptds_v7000), devPtr, pitch, value, width, height);
  return call.Finish(Memset(call, nullptr, devPtr, value, width, height, pitch, false));
}

cudaError_t cudaMemset2DAsync(void* devPtr, size_t pitch, int value, size_t width, size_t height,
                              cudaStream_t stream) {
  SG_API(SG_PT(cudaMemset2DAsync_v3020, cudaMemset2DAsync_ptsz_v7000), devPtr, pitch, value,
         width, height, stream);
  return call.Finish(Memset(call, stream, devPtr, value, width, height, pitch, true));
}

cudaError_t cudaMallocAsync(void** devPtr, size_t size, cudaStream_t hStream) {
  SG_API(SG_PT(cudaMallocAsync_v11020, cudaMallocAsync_ptsz_v11020), devPtr, size, hStream);
  if (devPtr == nullptr) return call.Finish(cudaErrorInvalidValue);
  simgpu::Stream* s = Resolve(call, hStream);
  if (s == nullptr) return call.Finish(cudaErrorInvalidResourceHandle);
  // Stream-ordered: the memory exists from the call on (a pool would hand out reserved memory).
  return call.Finish(simgpu::DeviceMalloc(simgpu::StreamDevice(s), size, false, true,
                                          call.correlation_id(), devPtr));
}

cudaError_t cudaFreeAsync(void* devPtr, cudaStream_t hStream) {
  SG_API(SG_PT(cudaFreeAsync_v11020, cudaFreeAsync_ptsz_v11020), devPtr, hStream);
  if (devPtr == nullptr) return call.Finish(cudaSuccess);
  simgpu::Stream* s = Resolve(call, hStream);
  if (s == nullptr) return call.Finish(cudaErrorInvalidResourceHandle);
  return call.Finish(simgpu::SubmitFreeAsync(s, devPtr, call.correlation_id()));
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  SG_API(SG_PT(cudaStreamSynchronize_v3020, cudaStreamSynchronize_ptsz_v7000), stream);
  return call.Finish(simgpu::NestedStreamSynchronize(
      stream, simgpu::kPerThreadDefaultStream, call.device(), [&]() -> cudaError_t {
        simgpu::Stream* s = Resolve(call, stream);
        if (s == nullptr) return cudaErrorInvalidResourceHandle;
        uint64_t start = simgpu::NowNs();
        cudaError_t e = simgpu::SynchronizeStream(s);
        simgpu::RecordSync(3 /* STREAM_SYNCHRONIZE */, simgpu::StreamDevice(s), s, nullptr,
                           start, simgpu::NowNs(), call.correlation_id());
        return e;
      }));
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
  SG_API(SG_PT(cudaStreamQuery_v3020, cudaStreamQuery_ptsz_v7000), stream);
  return call.Finish(simgpu::NestedStreamQuery(
      stream, simgpu::kPerThreadDefaultStream, call.device(), [&]() -> cudaError_t {
        simgpu::Stream* s = Resolve(call, stream);
        if (s == nullptr) return cudaErrorInvalidResourceHandle;
        return simgpu::StreamIdle(s) ? cudaSuccess : cudaErrorNotReady;
      }));
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  SG_API(SG_PT(cudaStreamWaitEvent_v3020, cudaStreamWaitEvent_ptsz_v7000), stream, event, flags);
  return call.Finish(simgpu::NestedStreamWaitEvent(
      stream, event, flags, simgpu::kPerThreadDefaultStream, call.device(), [&]() -> cudaError_t {
        simgpu::Stream* s = Resolve(call, stream);
        auto* e = reinterpret_cast<simgpu::Event*>(event);
        if (s == nullptr || !simgpu::IsEvent(e)) return cudaErrorInvalidResourceHandle;
        uint64_t now = simgpu::NowNs();
        cudaError_t r = simgpu::StreamWaitEvent(s, e);
        simgpu::RecordSync(2 /* STREAM_WAIT_EVENT */, simgpu::StreamDevice(s), s, e, now,
                           simgpu::NowNs(), call.correlation_id());
        return r;
      }));
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  SG_API(SG_PT(cudaEventRecord_v3020, cudaEventRecord_ptsz_v7000), event, stream);
  return call.Finish(simgpu::NestedEventRecord(
      event, stream, simgpu::kPerThreadDefaultStream, call.device(), [&]() -> cudaError_t {
        simgpu::Stream* s = Resolve(call, stream);
        auto* e = reinterpret_cast<simgpu::Event*>(event);
        if (s == nullptr || !simgpu::IsEvent(e)) return cudaErrorInvalidResourceHandle;
        return simgpu::RecordEvent(e, s, call.correlation_id());
      }));
}

cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags) {
  SG_API(SG_PT(cudaEventRecordWithFlags_v11010, cudaEventRecordWithFlags_ptsz_v11010), event,
         stream, flags);
  simgpu::Stream* s = Resolve(call, stream);
  auto* e = reinterpret_cast<simgpu::Event*>(event);
  if (s == nullptr || !simgpu::IsEvent(e)) return call.Finish(cudaErrorInvalidResourceHandle);
  return call.Finish(simgpu::RecordEvent(e, s, call.correlation_id()));
}

cudaError_t cudaStreamGetFlags(cudaStream_t hStream, unsigned int* flags) {
  SG_API(SG_PT(cudaStreamGetFlags_v5050, cudaStreamGetFlags_ptsz_v7000), hStream, flags);
  simgpu::Stream* s = Resolve(call, hStream);
  if (s == nullptr) return call.Finish(cudaErrorInvalidResourceHandle);
  if (flags == nullptr) return call.Finish(cudaErrorInvalidValue);
  *flags = simgpu::StreamFlags(s);
  return call.Finish(cudaSuccess);
}

cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int* priority) {
  SG_API(SG_PT(cudaStreamGetPriority_v5050, cudaStreamGetPriority_ptsz_v7000), hStream, priority);
  simgpu::Stream* s = Resolve(call, hStream);
  if (s == nullptr) return call.Finish(cudaErrorInvalidResourceHandle);
  if (priority == nullptr) return call.Finish(cudaErrorInvalidValue);
  *priority = simgpu::StreamPriority(s);
  return call.Finish(cudaSuccess);
}

cudaError_t cudaStreamGetId(cudaStream_t hStream, unsigned long long* streamId) {
  SG_API(SG_PT(cudaStreamGetId_v12000, cudaStreamGetId_ptsz_v12000), hStream, streamId);
  simgpu::Stream* s = Resolve(call, hStream);
  if (s == nullptr) return call.Finish(cudaErrorInvalidResourceHandle);
  if (streamId == nullptr) return call.Finish(cudaErrorInvalidValue);
  *streamId = simgpu::StreamId(s);
  return call.Finish(cudaSuccess);
}

cudaError_t cudaStreamGetDevice(cudaStream_t hStream, int* device) {
  SG_API(SG_PT(cudaStreamGetDevice_v12080, cudaStreamGetDevice_ptsz_v12080), hStream, device);
  simgpu::Stream* s = Resolve(call, hStream);
  if (s == nullptr) return call.Finish(cudaErrorInvalidResourceHandle);
  if (device == nullptr) return call.Finish(cudaErrorInvalidValue);
  *device = simgpu::StreamDevice(s);
  return call.Finish(cudaSuccess);
}

cudaError_t cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                             size_t sharedMem, cudaStream_t stream) {
  const simgpu::KernelInfo* k = simgpu::FindKernel(func);
  SG_API_LAUNCH(k ? k->name.c_str() : nullptr,
                SG_PT(cudaLaunchKernel_v7000, cudaLaunchKernel_ptsz_v7000), func, gridDim,
                blockDim, args, sharedMem, stream);
  return call.Finish(simgpu::LaunchKernel(call, k, gridDim, blockDim, sharedMem, stream,
                                          simgpu::kPerThreadDefaultStream, args));
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args) {
  const simgpu::KernelInfo* k = simgpu::FindKernel(func);
  SG_API_LAUNCH(k ? k->name.c_str() : nullptr,
                SG_PT(cudaLaunchKernelExC_v11060, cudaLaunchKernelExC_ptsz_v11060), config, func,
                args);
  if (config == nullptr) return call.Finish(cudaErrorInvalidValue);
  // Launch attributes (clusters, priorities, programmatic serialisation) do not change the model.
  return call.Finish(simgpu::LaunchKernel(call, k, config->gridDim, config->blockDim,
                                          config->dynamicSmemBytes, config->stream,
                                          simgpu::kPerThreadDefaultStream, args));
}

cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                        size_t sharedMem, cudaStream_t stream) {
  const simgpu::KernelInfo* k = simgpu::FindKernel(func);
  SG_API_LAUNCH(k ? k->name.c_str() : nullptr,
                SG_PT(cudaLaunchCooperativeKernel_v9000, cudaLaunchCooperativeKernel_ptsz_v9000),
                func, gridDim, blockDim, args, sharedMem, stream);
  return call.Finish(simgpu::LaunchKernel(call, k, gridDim, blockDim, sharedMem, stream,
                                          simgpu::kPerThreadDefaultStream, args));
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData) {
  SG_API(SG_PT(cudaLaunchHostFunc_v10000, cudaLaunchHostFunc_ptsz_v10000), stream, fn, userData);
  if (fn == nullptr) return call.Finish(cudaErrorInvalidValue);
  simgpu::Stream* s = Resolve(call, stream);
  if (s == nullptr) return call.Finish(cudaErrorInvalidResourceHandle);
  return call.Finish(simgpu::SubmitHostFunc(s, fn, userData, call.correlation_id()));
}

cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback,
                                  void* userData, unsigned int flags) {
  SG_API(SG_PT(cudaStreamAddCallback_v5000, cudaStreamAddCallback_ptsz_v7000), stream, callback,
         userData, flags);
  if (callback == nullptr || flags != 0) return call.Finish(cudaErrorInvalidValue);
  simgpu::Stream* s = Resolve(call, stream);
  if (s == nullptr) return call.Finish(cudaErrorInvalidResourceHandle);
  struct Pending {
    cudaStreamCallback_t callback;
    cudaStream_t stream;
    void* user;
  };
  auto* pending = new Pending{callback, stream, userData};  // freed by the trampoline
  void (*trampoline)(void*) = [](void* p) {
    auto* cb = static_cast<Pending*>(p);
    cb->callback(cb->stream, cudaSuccess, cb->user);
    delete cb;
  };
  cudaError_t e = simgpu::SubmitHostFunc(s, trampoline, pending, call.correlation_id());
  if (e != cudaSuccess) delete pending;
  return call.Finish(e);
}

cudaError_t cudaMallocFromPoolAsync(void** ptr, size_t size, cudaMemPool_t memPool,
                                    cudaStream_t stream) {
  SG_API(SG_PT(cudaMallocFromPoolAsync_v11020, cudaMallocFromPoolAsync_ptsz_v11020), ptr, size,
         memPool, stream);
  if (ptr == nullptr || memPool == nullptr) return call.Finish(cudaErrorInvalidValue);
  simgpu::Stream* s = Resolve(call, stream);
  if (s == nullptr) return call.Finish(cudaErrorInvalidResourceHandle);
  // One pool per device (api_mempool.cc): the allocation is the stream's device's.
  return call.Finish(simgpu::DeviceMalloc(simgpu::StreamDevice(s), size, false, true,
                                          call.correlation_id(), ptr));
}

}  // extern "C"
