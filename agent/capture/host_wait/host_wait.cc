// host_wait.cc — the names of host_wait.def's rows.
#include "agent/capture/host_wait/host_wait.h"

namespace gs {
namespace {
constexpr const char* kNames[] = {
#define GS_HOST_WAIT(NAME, ...) #NAME,
#include "agent/capture/host_wait/host_wait.def"
#undef GS_HOST_WAIT
};
static_assert(sizeof(kNames) / sizeof(kNames[0]) == kHostWaitFunctionCount, "one name per row");
}  // namespace

const char* HostWaitName(uint16_t function) {
  return function < kHostWaitFunctionCount ? kNames[function] : nullptr;
}

}  // namespace gs
