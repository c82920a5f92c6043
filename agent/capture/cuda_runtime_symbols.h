// cuda_runtime_symbols.h — finds the application's real CUDA runtime functions from inside the
// agent, without going through the agent's own interposers: the default runtime, which the
// agent's own calls use and the wrappers use for callers that name no runtime (caller_runtime.h
// sends each wrapped call to its caller's own).
//
// Search: dlvsym(RTLD_NEXT, name, "libcudart.so.13") (the runtime's symbols carry that version;
// pinning it picks the CUDA 13 runtime when a CUDA 12 one is loaded too), then plain
// dlsym(RTLD_NEXT, name) (a runtime without symbol versions), then the libcudart.so.* that is
// mapped in the process (found with dl_iterate_phdr and reopened with RTLD_NOLOAD). The last step
// matters for runtimes loaded with dlopen(RTLD_LOCAL), e.g. by a Python extension module: those
// are not in the global scope that RTLD_NEXT searches, yet libraries that link them reach the
// interposers through the global scope.
//
// Thread safety: safe from any thread. Allocation: dlsym's own (once per name; callers cache).
#ifndef GPUSTALL_AGENT_CAPTURE_CUDA_RUNTIME_SYMBOLS_H_
#define GPUSTALL_AGENT_CAPTURE_CUDA_RUNTIME_SYMBOLS_H_

#include <string>

namespace gs {

// The real runtime function `name`, or nullptr if no loaded runtime defines it.
void* FindCudaRuntimeSymbol(const char* name);

// Path of the first mapped object whose file name starts with `prefix` (e.g. "libcudart.so",
// "libcupti.so"), or "" if none is mapped.
std::string FindMappedLibrary(const char* prefix);

// The CUDA major of a library's file name (libcudart.so.12[.x.y] → 12), 0 when it has none.
int CudaMajorOfLibrary(const std::string& path);

}  // namespace gs

#endif  // GPUSTALL_AGENT_CAPTURE_CUDA_RUNTIME_SYMBOLS_H_
