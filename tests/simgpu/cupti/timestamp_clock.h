// timestamp_clock.h — CUPTI's clock, and the mapping of simgpu's timestamps onto it.
//
// The simulated driver stamps everything on CLOCK_MONOTONIC. Real CUPTI on Linux reports
// CLOCK_REALTIME, or the clock of the callback registered with
// cuptiActivityRegisterTimestampCallback. Like real CUPTI converting GPU timestamps, this maps each
// driver timestamp with an offset pair (a monotonic reading bracketing one reading of the target
// clock), taken when the clock is chosen: the default clock at first use, a callback clock when it
// is registered. Records made before a change keep the old clock, as documented for real CUPTI.
//
// Thread safety: all functions may be called from any thread. The registered callback must be
// thread-safe itself (it is called from application threads and from CUPTI's worker).
#ifndef GPUSTALL_TESTS_SIMGPU_CUPTI_TIMESTAMP_CLOCK_H_
#define GPUSTALL_TESTS_SIMGPU_CUPTI_TIMESTAMP_CLOCK_H_

#include <cstdint>

#include <cupti.h>

namespace simgpu_cupti {

// Now, on CUPTI's clock (what cuptiGetTimestamp returns).
uint64_t TimestampNow();

// A driver (CLOCK_MONOTONIC) timestamp on CUPTI's clock; 0 stays 0 (CUPTI_TIMESTAMP_UNKNOWN).
uint64_t TimestampFromMonotonic(uint64_t monotonic_ns);

// Switches to `callback`'s clock (nullptr: back to CLOCK_REALTIME) and takes a new offset pair.
void SetTimestampCallback(CUpti_TimestampCallbackFunc callback);

}  // namespace simgpu_cupti

#endif  // GPUSTALL_TESTS_SIMGPU_CUPTI_TIMESTAMP_CLOCK_H_
