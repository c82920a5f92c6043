// interposers.cc — the exported CUDA runtime wrappers, one per row of cuda_api.def.
//
// Nothing here is written by hand per function: the macro below is the whole wrapper. Each one
// keeps the application's view exact: the real function's return value is returned unchanged,
// errno is what the real function left (or what it was before, if it left it alone), and a thread
// already inside a wrapper or inside the agent goes straight to the real function.
//
// Exported unversioned (the anonymous version script gsagent.map.in): the runtime's symbols carry
// the version `libcudart.so.13` or `libcudart.so.12`, and a wrapper under a named version node of
// its own would silently stop interposing (agent/cupti/NOTES.md §5). Being unversioned, one
// wrapper catches the calls of CUDA 12 and 13 callers alike; each call goes on to its caller's
// runtime (RealFunction, agent/capture/caller_runtime.h).
#include <cerrno>

#include "agent/capture/cuda_api/cuda_api.h"
#include "shim/interposed_call.h"

#define GS_INTERPOSER __attribute__((visibility("default")))
#define GS_UNPAREN(...) __VA_ARGS__

#define GS_CUDA_API(NAME, CBID, PARAMS_T, CLASS, FLAGS, EFFECT, SIGNATURE, ARGS, ...)            \
  extern "C" GS_INTERPOSER cudaError_t NAME SIGNATURE {                                          \
    using Real = cudaError_t(*) SIGNATURE;                                                       \
    constexpr ::gs::CudaApi kApi = ::gs::CudaApi::k_##NAME;                                      \
    const int errno_at_entry = errno;                                                            \
    const Real real = reinterpret_cast<Real>(                                                    \
        ::gs::shim::RealFunction(kApi, reinterpret_cast<uintptr_t>(__builtin_return_address(0))));  \
    if (real == nullptr) return cudaErrorNotSupported; /* no runtime defines it */               \
    const PARAMS_T p = {GS_UNPAREN ARGS};                                                        \
    ::gs::shim::InterposedCall call;                                                             \
    if (!call.Begin(kApi, ::gs::CudaFactsOf_##NAME(p, false).stream)) {                          \
      errno = errno_at_entry;                                                                    \
      return real ARGS;                                                                          \
    }                                                                                            \
    errno = errno_at_entry;                                                                      \
    const cudaError_t result = real ARGS;                                                        \
    const int errno_after_call = errno;                                                          \
    call.End(result, ::gs::CudaFactsOf_##NAME(p, result == cudaSuccess), &p, GS_CALL_SITE());    \
    errno = errno_after_call;                                                                    \
    return result;                                                                               \
  }
#include "agent/capture/cuda_api/cuda_api.def"
#undef GS_CUDA_API
