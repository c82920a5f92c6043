// injection.cc — the library's entry points other than the CUDA wrappers:
//   * InitializeInjection, which the CUDA driver calls when CUDA_INJECTION64_PATH names this
//     library (agent/cupti/NOTES.md §1); the agent makes it idempotent and never initialises twice when
//     LD_PRELOAD loaded the same file;
//   * the library constructor, which only registers the capture source factory (no threads, no
//     files, no CUDA: a process that never uses CUDA must not notice us, agent/cupti/NOTES.md §6);
//   * InitializeInjectionNvtx2, which NVTX v3 calls (once per module that uses NVTX) when
//     NVTX_INJECTION64_PATH names this library (agent/cupti/NOTES.md §4; agent/nvtx/nvtx_injection.h);
//   * exec interposers, which flush the trace of this process image before it is replaced.
#include <dlfcn.h>

#include <cerrno>

#include <atomic>
#include <cstdlib>

#include "agent/core/agent.h"
#include "agent/core/config/config.h"
#include "agent/nvtx/nvtx_injection.h"
#include "agent/cupti/gpu_capture_source.h"
#include "agent/capture/cuda_api/cuda_api.h"
#include "shim/host_wait_call.h"
#include "shim/interposed_call.h"

#define GS_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

void RegisterWithAgent();

gs::CaptureSource* MakeSourceForShim(const gs::Config& config) {
  gs::CaptureSource* source = gs::MakeGpuCaptureSource(config);
  gs::shim::g_capture_stacks.store(config.stacks != gs::StackMode::kNone, std::memory_order_relaxed);
  gs::shim::g_capture_source.store(source, std::memory_order_release);
  // The blocking-call wrappers (host_wait_interposers.cc): settings before the switch.
  gs::shim::HostWaitSettings& waits = gs::shim::g_host_wait_settings;
  waits.min_ns.store(static_cast<uint64_t>(config.wait_min_us) * 1000u, std::memory_order_relaxed);
  waits.any_thread.store(config.sample_all_threads, std::memory_order_relaxed);
  waits.on.store(config.host_waits, std::memory_order_relaxed);
  return source;
}

// Names for the trace's API function table: the tables' names, else CUPTI's for its cbids
// outside them (runtime calls recorded as "other"); else the trace keeps the raw id (the writer
// writes no name for nullptr).
const char* ApiNameForTrace(gs::ApiSource source, uint16_t api_id) {
  const char* name = gs::CudaApiName(source, api_id);
  return name != nullptr ? name : gs::CuptiSession::CallbackName(source, api_id);
}

// Under LD_PRELOAD, also ask the driver to call our InitializeInjection at cuInit
// (agent/cupti/NOTES.md §1, §7): programs that reach the runtime without going through the interposers
// (Python's ctypes looks symbols up in libcudart's own scope; statically linked runtimes) then
// still activate the agent, and CUPTI sees their calls. The same file is loaded, so glibc hands the
// driver this very instance: one agent either way. A value someone else set (Nsight, "none") is
// left alone.
//
// NVTX_INJECTION64_PATH likewise (agent/cupti/NOTES.md §4): NVTX v3 is header-only and cannot be
// interposed; each module that uses it reads this variable at its first NVTX call and dlopens the
// library it names, which then returns this very instance. Set before main, every module sees it.
void PointInjectionAtSelf(const char* variable) {
  const char* current = std::getenv(variable);
  if (current != nullptr && current[0] != '\0') return;
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&RegisterWithAgent), &info) == 0 || info.dli_fname == nullptr) return;
  char* path = realpath(info.dli_fname, nullptr);  // the driver may dlopen it after a chdir
  if (path == nullptr) return;
  setenv(variable, path, 0);
  std::free(path);
}

__attribute__((constructor)) void RegisterWithAgent() {
  gs::AgentSetCaptureSourceFactory(&MakeSourceForShim);
  gs::AgentSetApiNameFunction(&ApiNameForTrace);
  PointInjectionAtSelf("CUDA_INJECTION64_PATH");
  PointInjectionAtSelf("NVTX_INJECTION64_PATH");
}

template <typename F>
F RealLibc(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

// What an exec wrapper returns if libc's function cannot be found (it always can in practice).
int NoExec() {
  errno = ENOSYS;
  return -1;
}

}  // namespace

GS_EXPORT int InitializeInjection(void) { return gs::AgentInitializeInjection(); }

// NVTX's NvtxInitializeInjectionNvtxFunc_t; the pointer type is NvtxGetExportTableFunc_t.
GS_EXPORT int InitializeInjectionNvtx2(gs::NvtxGetExportTable get_export_table) {
  return gs::NvtxInitializeInjection(get_export_table);
}

// glibc's execv/execvp/execl* call execve internally without going through the PLT, so each
// public entry point an application uses is wrapped. (The variadic execl* family is not: they are
// rare in the programs we trace, and a missed flush there only loses the last ~100 ms.)
GS_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  static auto real = RealLibc<int (*)(const char*, char* const[], char* const[])>("execve");
  if (real == nullptr) return NoExec();
  gs::AgentBeforeExec();
  return real(path, argv, envp);
}

GS_EXPORT int execv(const char* path, char* const argv[]) {
  static auto real = RealLibc<int (*)(const char*, char* const[])>("execv");
  if (real == nullptr) return NoExec();
  gs::AgentBeforeExec();
  return real(path, argv);
}

GS_EXPORT int execvp(const char* file, char* const argv[]) {
  static auto real = RealLibc<int (*)(const char*, char* const[])>("execvp");
  if (real == nullptr) return NoExec();
  gs::AgentBeforeExec();
  return real(file, argv);
}

GS_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  static auto real = RealLibc<int (*)(const char*, char* const[], char* const[])>("execvpe");
  if (real == nullptr) return NoExec();
  gs::AgentBeforeExec();
  return real(file, argv, envp);
}
