// cuda_api.h — the interposed CUDA runtime functions as data, derived from cuda_api.def.
//
// One description per function serves three users:
//   * shim/interposers.cc builds its LD_PRELOAD wrappers from it;
//   * agent/cupti decodes CUPTI callback parameters with it, for calls the shim cannot see
//     (statically linked runtimes, runtimes embedded in cuBLAS/cuDNN/NCCL, ctypes' RTLD_LOCAL);
//   * the agent names api ids in the trace with it (CudaApiName).
//
// Everything here is constant data and pure functions: thread-safe, no allocation.
#ifndef GPUSTALL_AGENT_CAPTURE_CUDA_API_CUDA_API_H_
#define GPUSTALL_AGENT_CAPTURE_CUDA_API_CUDA_API_H_

#include <cuda_runtime_api.h>
// cupti.h brings the cbids and generated_cuda_runtime_api_meta.h (which has no include guard,
// so it must only ever be included through cupti.h).
#include <cupti.h>

#include <cstddef>
#include <cstdint>

#include "agent/record/events.h"
#include "agent/capture/cuda_api/cuda_api_params.h"

namespace gs {

// One enumerator per row of cuda_api.def: k_cudaMemcpy, k_cudaMemcpyAsync_ptsz, ...
enum class CudaApi : uint16_t {
#define GS_CUDA_API(NAME, ...) k_##NAME,
#include "agent/capture/cuda_api/cuda_api.def"
#undef GS_CUDA_API
  kCount
};
inline constexpr size_t kCudaApiCount = static_cast<size_t>(CudaApi::kCount);

// What a call changes in the agent's view of memory or of the calling thread.
enum class CudaApiEffect : uint8_t {
  kNone = 0,
  kAddPinned,      // [address, address + bytes) is page-locked host memory from now on
  kAddManaged,     // [address, address + bytes) is managed memory
  kRemoveHost,     // the range starting at address is no longer pinned
  kRemoveManaged,  // cudaFree: forget a managed range starting at address, if there is one
  kSetDevice,      // the calling thread's current device changed
  kBeginCapture,   // a stream began capturing (capture/stream_capture.h)
};

struct CudaApiInfo {
  const char* name;     // exported symbol name, e.g. "cudaMemcpyAsync_ptsz"
  uint32_t cupti_cbid;  // CUPTI_RUNTIME_TRACE_CBID_*
  ApiClass api_class;
  uint8_t flags;        // ApiFlags
  CudaApiEffect effect;
  bool recorded;        // false for calls tracked only for their effect (cudaSetDevice)
};

// Indexed by CudaApi.
extern const CudaApiInfo kCudaApiInfo[kCudaApiCount];

inline const CudaApiInfo& InfoOf(CudaApi api) { return kCudaApiInfo[static_cast<size_t>(api)]; }

// True for calls that put work on a stream (the event-pair fallback times them).
inline bool IsGpuWork(ApiClass c) {
  return c == ApiClass::kLaunch || c == ApiClass::kMemcpy || c == ApiClass::kMemset;
}

// copy_kind value of a call that is not a copy.
inline constexpr int kNotACopy = -1;
// The stream a per-thread-default-stream call (_ptds, or _ptsz with stream 0) goes to.
inline const cudaStream_t kPerThreadStream = cudaStreamPerThread;

// The facts about one call that the records need, evaluated from the table's expressions.
struct CudaCallFacts {
  uint64_t stream = 0;      // cudaStream_t as an integer
  uint64_t bytes = 0;
  uint64_t address = 0;
  const void* dst = nullptr;
  const void* src = nullptr;
  int copy_kind = kNotACopy;  // cudaMemcpyKind, or kNotACopy
};

namespace cuda_api_internal {
inline uint64_t ToU64(std::nullptr_t) { return 0; }
template <typename T>
inline uint64_t ToU64(T* p) { return reinterpret_cast<uintptr_t>(p); }
inline uint64_t ToU64(unsigned long long v) { return v; }
inline uint64_t ToU64(unsigned long v) { return v; }
inline uint64_t ToU64(unsigned int v) { return v; }
inline uint64_t ToU64(int v) { return static_cast<uint64_t>(static_cast<int64_t>(v)); }
inline const void* ToPtr(std::nullptr_t) { return nullptr; }
template <typename T>
inline const void* ToPtr(T* p) { return p; }
}  // namespace cuda_api_internal

// The body of a function (const PARAMS_T& p, bool ok) -> CudaCallFacts that evaluates a table
// row's expressions (cuda_api.def's and cuda_driver_api.def's columns are the same).
#define GS_CUDA_CALL_FACTS_BODY(STREAM, BYTES, COPY_KIND, DST, SRC, ADDRESS) \
  using namespace cuda_api_internal;                                         \
  CudaCallFacts f;                                                           \
  f.stream = ToU64(STREAM);                                                  \
  f.bytes = ToU64(BYTES);                                                    \
  f.address = ToU64(ADDRESS);                                                \
  f.dst = ToPtr(DST);                                                        \
  f.src = ToPtr(SRC);                                                        \
  f.copy_kind = static_cast<int>(COPY_KIND);                                 \
  return f;

// CudaFactsOf_<NAME>(params, ok): the row's expressions evaluated on a params struct.
#define GS_CUDA_API(NAME, CBID, PARAMS_T, CLASS, FLAGS, EFFECT, SIGNATURE, ARGS, STREAM, BYTES, \
                    COPY_KIND, DST, SRC, ADDRESS)                                                \
  inline CudaCallFacts CudaFactsOf_##NAME([[maybe_unused]] const PARAMS_T& p,                     \
                                          [[maybe_unused]] bool ok) {                             \
    GS_CUDA_CALL_FACTS_BODY(STREAM, BYTES, COPY_KIND, DST, SRC, ADDRESS)                          \
  }
#include "agent/capture/cuda_api/cuda_api.def"
#undef GS_CUDA_API

// The table row of a CUPTI runtime-API cbid, if the table has one.
bool CudaApiFromCupti(uint32_t cbid, CudaApi* api);

// Facts of a call from CUPTI's functionParams (CUpti_CallbackData::functionParams) for `api`.
// `params` may be null only for calls without parameters.
CudaCallFacts CudaFactsFromCuptiParams(CudaApi api, const void* params, bool ok);

// A kernel launch's configuration (cuda_launch.def): grid, block, dynamic shared memory.
struct KernelLaunchShape {
  uint32_t grid[3] = {0, 0, 0};
  uint32_t block[3] = {0, 0, 0};
  uint32_t dynamic_shared_bytes = 0;
};
// `params` is `api`'s PARAMS_T (as for CudaFactsFromCuptiParams). False for a call that is not
// one kernel's launch (or has no configuration: a null cudaLaunchConfig_t).
bool KernelLaunchShapeOf(CudaApi api, const void* params, KernelLaunchShape* out);

// The name to write into the trace for an ApiCallEvent's api_id: the table's name for
// ApiSource::kInterposer, for kCuptiCallback the table's name of that cbid, for
// kCuptiDriverCallback cuda_driver_api.def's (nullptr when the cbid is not in the table; the caller
// may then ask CUPTI's cuptiGetCallbackName).
const char* CudaApiName(ApiSource source, uint16_t api_id);

}  // namespace gs

#endif  // GPUSTALL_AGENT_CAPTURE_CUDA_API_CUDA_API_H_
