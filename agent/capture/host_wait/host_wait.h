// host_wait.h — the blocking libc calls the shim wraps (host_wait.def), as data.
//
// The shim generates its wrappers and export list from host_wait.def; the writer names a
// HostWaitEvent's function with HostWaitName. No libc or CUDA types here: the table's signatures
// are only expanded in shim/host_wait_interposers.cc.
//
// Thread safety: constant data.
#ifndef GPUSTALL_AGENT_CAPTURE_HOST_WAIT_HOST_WAIT_H_
#define GPUSTALL_AGENT_CAPTURE_HOST_WAIT_HOST_WAIT_H_

#include <cstddef>
#include <cstdint>

#include "agent/record/events.h"

namespace gs {

// One enumerator per row of host_wait.def, in table order: k_nanosleep, k_read, ...
enum class HostWaitFunction : uint16_t {
#define GS_HOST_WAIT(NAME, ...) k_##NAME,
#include "agent/capture/host_wait/host_wait.def"
#undef GS_HOST_WAIT
  kCount
};
constexpr size_t kHostWaitFunctionCount = static_cast<size_t>(HostWaitFunction::kCount);

// The libc name of a row ("nanosleep"); nullptr for an index outside the table.
const char* HostWaitName(uint16_t function);

}  // namespace gs

#endif  // GPUSTALL_AGENT_CAPTURE_HOST_WAIT_HOST_WAIT_H_
