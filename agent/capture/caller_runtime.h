// caller_runtime.h — which CUDA runtime a call into the interposers belongs to. The wrappers are
// unversioned, so they catch cudaX@libcudart.so.12 and cudaX@libcudart.so.13 alike: in a process
// where an application linked to CUDA 12's runtime loads a plugin linked to CUDA 13's (or the
// reverse), both call the same wrapper, and each call must reach the runtime its caller was linked
// to. dlsym(RTLD_NEXT) cannot tell: it finds the first runtime of the global scope, and nothing
// at all of a runtime opened RTLD_LOCAL (agent/cupti/NOTES.md §9).
//
// The runtime of a call is that of the object its return address lies in: the libcudart.so.N its
// dynamic section names (DT_NEEDED), found among the mapped objects and bound by version node
// (dlvsym "libcudart.so.N"), as the dynamic linker binds the caller's own references. An object
// that names no runtime (ctypes' libffi, a program whose runtime is loaded by a library it
// calls through) gets the default: the first runtime found the old way (cuda_runtime_symbols.h).
//
// Cost: a call looks its return address up in a table of object address ranges, starting at the
// thread's last hit (a few compares); an object not seen before takes a mutex and walks the mapped
// objects once. The table is append-only: an unloaded object's entry stays, and a new object
// mapped over its addresses is found before it (the newest entries are searched first), except by
// a thread whose last hit was the old entry; that takes dlclose of a library that called CUDA and
// another at its addresses, linked to the other runtime.
//
// Thread safety: RuntimeOfCaller and RuntimeFunction are safe from any thread, lock-free on hits.
#ifndef GPUSTALL_AGENT_CAPTURE_CALLER_RUNTIME_H_
#define GPUSTALL_AGENT_CAPTURE_CALLER_RUNTIME_H_

#include <cstdint>

namespace gs {

// Runtimes told apart; 0 is the default runtime, others are added as callers name them.
inline constexpr int kMaxCudaRuntimes = 4;

// The runtime index (0 … kMaxCudaRuntimes - 1) of a call whose return address is `caller`.
int RuntimeOfCaller(uintptr_t caller);

// The real function `name` of runtime `runtime` (> 0; the default's is FindCudaRuntimeSymbol's),
// or nullptr when that runtime lacks it.
void* FindFunctionOfRuntime(int runtime, const char* name);

// The CUDA major of runtime `runtime` (12, 13), 0 when unknown (tests, the trace).
int MajorOfRuntime(int runtime);

}  // namespace gs

#endif  // GPUSTALL_AGENT_CAPTURE_CALLER_RUNTIME_H_
