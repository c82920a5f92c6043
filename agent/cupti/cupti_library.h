// cupti_library.h — libcupti, loaded with dlopen (never linked: a DT_NEEDED on libcupti would load
// it into every process that inherits LD_PRELOAD, CUDA or not) and reached through a table of
// function pointers.
//
// Where it looks, first hit wins:
//   1. a libcupti.so.* already mapped in the process (torch's, for example): a second CUPTI
//      instance would collide with it at the driver level anyway;
//   2. GS_CUPTI_LIBRARY (an explicit path);
//   3. next to the libcudart.so.N the process actually loaded, the same major N, including the
//      pip wheel layouts (nvidia/cu13/lib holds both; nvidia/cuda_runtime/lib →
//      nvidia/cuda_cupti/lib) and the toolkit layout (lib64 → extras/CUPTI/lib64): CUPTI from the
//      job's own CUDA release;
//   4. "libcupti.so.N" on the loader's search path (LD_LIBRARY_PATH, RUNPATH, ld.so.cache), the
//      runtime's major N first (13 when no runtime is mapped yet), then the other;
//   5. the toolkit folders ($CUDA_HOME, $CUDA_PATH, /usr/local/cuda, /usr/local/cuda-13*,
//      /usr/local/cuda-12*), the same order of majors.
// CUDA 12.0–12.9 (libcupti.so.12, cuptiGetVersion 18 … 28) and 13.x (libcupti.so.13, 130000 and
// up) are read alike (activity_converter.cc); the major is the version node of the library's
// symbols (cuptiGetVersion@libcupti.so.12 or @libcupti.so.13), which NVIDIA's libraries and
// simgpu's both carry. Anything else (CUDA 11's libcupti) is refused with the reason.
// This is the one place that rule lives: the gpustall front end names no CUPTI, it reports the
// one the trace says was used.
//
// Thread safety: Load is called once, by the capture source's Start; afterwards the table is
// read-only.
#ifndef GPUSTALL_AGENT_CUPTI_CUPTI_LIBRARY_H_
#define GPUSTALL_AGENT_CUPTI_CUPTI_LIBRARY_H_

#include <cupti.h>

#include "agent/capture/cuda_runtime_symbols.h"  // CudaMajorOfLibrary

#include <cstdint>
#include <string>
#include <vector>

namespace gs {

// X(name, required): the CUPTI functions the agent uses. Optional ones may be null.
#define GS_CUPTI_FUNCTIONS(X)                          \
  X(cuptiGetVersion, true)                             \
  X(cuptiGetResultString, true)                        \
  X(cuptiSubscribe, true)                              \
  X(cuptiSubscribe_v2, false)                          \
  X(cuptiUnsubscribe, true)                            \
  X(cuptiEnableCallback, true)                         \
  X(cuptiEnableDomain, false)                          \
  X(cuptiGetCallbackName, false)                       \
  X(cuptiGetGraphNodeId, false)                        \
  X(cuptiActivityEnable, true)                         \
  X(cuptiActivityDisable, true)                        \
  X(cuptiActivityRegisterCallbacks, true)              \
  X(cuptiActivityGetNextRecord, true)                  \
  X(cuptiActivityFlushAll, true)                       \
  X(cuptiActivityFlushPeriod, false)                   \
  X(cuptiActivityGetNumDroppedRecords, false)          \
  X(cuptiActivityRegisterTimestampCallback, false)     \
  X(cuptiSetThreadIdType, false)                       \
  X(cuptiGetTimestamp, false)                          \
  X(cuptiGetDeviceId, false)

struct CuptiFunctions {
#define GS_CUPTI_POINTER(name, required) decltype(&::name) name = nullptr;
  GS_CUPTI_FUNCTIONS(GS_CUPTI_POINTER)
#undef GS_CUPTI_POINTER
};

struct CuptiLibrary {
  CuptiFunctions fn;
  std::string path;     // the file that was loaded
  uint32_t version = 0; // cuptiGetVersion()
  int major = 0;        // 12 or 13: the CUDA release, from the symbols' version node
};

// Loads libcupti as described above. On failure returns false and says why in `error` (e.g. "not
// found (tried: ...)", "...: not CUDA 12 or 13's CUPTI", "missing cuptiSubscribe").
// `explicit_path` is GS_CUPTI_LIBRARY ("" when unset).
bool LoadCuptiLibrary(const std::string& explicit_path, CuptiLibrary* library, std::string* error);

// The candidate paths of steps 2-5 above, in order (exposed for tests).
std::vector<std::string> CuptiCandidatePaths(const std::string& explicit_path,
                                             const std::string& loaded_cudart_path);

// The first CUPTI API versions this agent reads, per CUDA major: 12.0's (18; CUDA 11.8's
// library says 18 too, which the major tells apart) and 13.0's (130000).
inline constexpr uint32_t kMinCupti12ApiVersion = 18;
inline constexpr uint32_t kMinCupti13ApiVersion = 130000;

}  // namespace gs

#endif  // GPUSTALL_AGENT_CUPTI_CUPTI_LIBRARY_H_
