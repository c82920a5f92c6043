// host_wait_interposers.cc — the exported blocking libc wrappers, one per row of
// agent/capture/host_wait/host_wait.def, and what they share (host_wait_call.h).
//
// Exported unversioned (gsagent.map.in): an unversioned definition in a preloaded object
// satisfies the application's versioned references (read@GLIBC_2.2.5). libgsagent.so is linked
// -Bsymbolic, so the agent's own calls to these functions come here too: its threads are marked
// (agent/core/agent_thread.h) and go straight through.
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "agent/core/agent.h"
#include "agent/core/clock.h"
#include "shim/host_wait_call.h"
#include "shim/interposed_call.h"  // GS_CALL_SITE

namespace gs {
namespace shim {

HostWaitSettings g_host_wait_settings;
std::atomic<void*> g_real_wait_functions[kHostWaitFunctionCount] = {};

namespace {

struct RealWait {
  const char* name;
  const char* version;  // nullptr: the default version
};
constexpr RealWait kRealWaits[] = {
#define GS_HOST_WAIT(NAME, RET, SIGNATURE, ARGS, VERSION, ...) {#NAME, VERSION},
#include "agent/capture/host_wait/host_wait.def"
#undef GS_HOST_WAIT
};
static_assert(sizeof(kRealWaits) / sizeof(kRealWaits[0]) == kHostWaitFunctionCount, "one row each");

// Set while this thread is inside dlsym for a wrapper: a wait function called from inside
// (a malloc that initialises itself by reading a file) must not resolve again.
__attribute__((tls_model("initial-exec"))) thread_local bool t_resolving;

// Resolves every row while the library is loaded, so that no wrapper needs dlsym later. Runs
// before the agent's other constructor work; no thread, no file, no allocation of ours.
__attribute__((constructor)) void ResolveAllRealWaitFunctions() {
  for (size_t i = 0; i < kHostWaitFunctionCount; ++i) ResolveRealWaitFunction(static_cast<HostWaitFunction>(i));
}

}  // namespace

void* ResolveRealWaitFunction(HostWaitFunction f) {
  if (t_resolving) return nullptr;
  t_resolving = true;
  const int saved_errno = errno;
  const RealWait& row = kRealWaits[static_cast<size_t>(f)];
  void* p = row.version != nullptr ? dlvsym(RTLD_NEXT, row.name, row.version) : nullptr;
  if (p == nullptr) p = dlsym(RTLD_NEXT, row.name);
  errno = saved_errno;
  t_resolving = false;
  if (p != nullptr) g_real_wait_functions[static_cast<size_t>(f)].store(p, std::memory_order_release);
  return p;
}

void RecordHostWait(HostWaitFunction f, HostWaitState state, uint64_t enter_ns, uint64_t exit_ns,
                    const CallSite& site) {
  Recorder* recorder = AgentRecorderIfActive();
  if (recorder == nullptr || !recorder->enabled()) return;
  const int saved_errno = errno;
  HostWaitEvent event{};
  event.enter_ns = enter_ns;
  event.exit_ns = exit_ns;
  event.function = static_cast<uint16_t>(f);
  event.state = state;
  // Skip this function and the wrapper: the first frame kept is the application's call site.
  recorder->RecordHostWait(event, g_capture_stacks.load(std::memory_order_relaxed), 2, site,
                           g_host_wait_settings.any_thread.load(std::memory_order_relaxed));
  errno = saved_errno;
}

}  // namespace shim
}  // namespace gs

#define GS_INTERPOSER __attribute__((visibility("default")))

#define GS_HOST_WAIT(NAME, RET, SIGNATURE, ARGS, VERSION, STATE, MISSING)                   \
  extern "C" GS_INTERPOSER RET NAME SIGNATURE {                                             \
    using Real = RET(*) SIGNATURE;                                                          \
    constexpr ::gs::HostWaitFunction kFunction = ::gs::HostWaitFunction::k_##NAME;          \
    const Real real = reinterpret_cast<Real>(::gs::shim::RealWaitFunction(kFunction));      \
    if (__builtin_expect(real == nullptr, 0)) return MISSING;                               \
    if (!::gs::shim::HostWaitWanted()) return real ARGS;                                    \
    const uint64_t enter_ns = ::gs::MonotonicNs();                                          \
    const RET result = real ARGS;                                                           \
    const uint64_t exit_ns = ::gs::MonotonicNs();                                           \
    if (__builtin_expect(exit_ns - enter_ns >= ::gs::shim::HostWaitMinNs(), 0)) {           \
      ::gs::shim::RecordHostWait(kFunction, STATE, enter_ns, exit_ns, GS_CALL_SITE());      \
    }                                                                                       \
    return result;                                                                          \
  }
#include "agent/capture/host_wait/host_wait.def"
#undef GS_HOST_WAIT
