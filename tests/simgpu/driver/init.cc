// init.cc — driver initialisation (the cuInit of simgpu), CUDA_INJECTION64_PATH, exit and fork.
//
// Order, as the real driver's: config -> devices and device thread -> the injection library's
// InitializeInjection(), once, synchronously, before the first API call that triggered
// initialisation submits anything. Our atexit handler is registered after the injection runs,
// so it runs before the tool's own atexit handlers: pending device work completes and is
// reported before a tool flushes its buffers.
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "driver/api_scope.h"
#include "driver/internal.h"

namespace simgpu {
namespace {

enum class InitState { kNone, kRunning, kDone };

std::mutex g_init_mu;
InitState g_state = InitState::kNone;
std::thread::id g_init_thread;
pid_t g_init_pid = 0;

void AtExit() {
  if (static_cast<pid_t>(ProcessId()) != g_init_pid) return;
  TimelineDrainAtExit();
  TruthFlush();
}

void CallInjection(const std::string& path) {
  if (path.empty() || path == "none") return;
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "simgpu: CUDA_INJECTION64_PATH=%s: %s\n", path.c_str(), dlerror());
    return;
  }
  using InitFn = int (*)(void);
  auto fn = reinterpret_cast<InitFn>(dlsym(lib, "InitializeInjection"));
  if (fn == nullptr) return;  // the real driver moves on silently, too
  fn();
}

}  // namespace

cudaError_t EnsureInitialized() {
  {
    std::unique_lock<std::mutex> lock(g_init_mu);
    if (g_state == InitState::kDone) {
      return static_cast<pid_t>(ProcessId()) == g_init_pid ? cudaSuccess : cudaErrorInitializationError;
    }
    // The injection library may call back into CUDA from InitializeInjection on this thread:
    // let it through (devices exist by then) instead of deadlocking.
    if (g_state == InitState::kRunning) {
      if (g_init_thread == std::this_thread::get_id()) return cudaSuccess;
    }
  }
  static std::once_flag once;
  std::call_once(once, [] {
    {
      std::lock_guard<std::mutex> lock(g_init_mu);
      g_state = InitState::kRunning;
      g_init_thread = std::this_thread::get_id();
      g_init_pid = static_cast<pid_t>(ProcessId());
    }
    const Config& c = GetConfig();
    if (!c.truth_path.empty()) TruthOpen(c.truth_path);
    TimelineStart(c.devices);
    CallInjection(c.injection_path);
    std::atexit(AtExit);
    std::lock_guard<std::mutex> lock(g_init_mu);
    g_state = InitState::kDone;
  });
  return static_cast<pid_t>(ProcessId()) == g_init_pid ? cudaSuccess : cudaErrorInitializationError;
}

int DeviceCount() { return GetConfig().devices; }

bool DriverInitialized() {
  std::lock_guard<std::mutex> lock(g_init_mu);
  return g_state != InitState::kNone && static_cast<pid_t>(ProcessId()) == g_init_pid;
}

}  // namespace simgpu
