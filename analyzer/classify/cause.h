// cause.h — the causes an idle interval is charged to: every idle interval gets one or more.
#ifndef GPUSTALL_ANALYZER_CLASSIFY_CAUSE_H_
#define GPUSTALL_ANALYZER_CLASSIFY_CAUSE_H_

#include <array>
#include <cstdint>

#include "analyzer/model/types.h"

namespace gs::analyzer {

// Order is the report order. Adding a cause: 1. add it here before kCount; 2. give it a name and
// a description in cause.cc; 3. decide it in gap_classifier.cc; 4. document it in JSON.md.
enum class Cause : uint8_t {
  kHostWork = 0,        // submitting thread outside CUDA calls
  kAllocator,           // inside cudaMalloc/cudaFree/host allocation
  kPageableCopy,        // inside a copy whose host side is pageable (staging)
  kLaunchOverhead,      // inside enqueue calls / between back-to-back launches
  kDeviceWait,          // work was queued but waited on the device (event, other stream)
  kLaunchLatency,       // work was queued and started within launch_latency_max_ns
  kOther,               // unexplained: no host call known, or inside sync/query calls
  kCount
};
inline constexpr int kNumCauses = static_cast<int>(Cause::kCount);

using CauseNs = std::array<TimeNs, kNumCauses>;

const char* CauseName(Cause c);         // JSON name: "host_work", ...
const char* CauseTitle(Cause c);        // human: "host work", ...
const char* CauseDescription(Cause c);  // one line: what the evidence was

// Host-work refinement by what samples say the thread was doing (the agent's sampler).
enum class HostState : uint8_t { kUnsampled = 0, kCpu, kIoWait, kLockWait, kSleep, kOther, kCount };
inline constexpr int kNumHostStates = static_cast<int>(HostState::kCount);
const char* HostStateName(HostState s);  // "unsampled", "cpu", "io_wait", ...
// From gpustall.trace.ThreadState.
HostState HostStateFromThreadState(uint8_t state);

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_CLASSIFY_CAUSE_H_
