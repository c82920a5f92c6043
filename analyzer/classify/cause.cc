#include "analyzer/classify/cause.h"

namespace gs::analyzer {

const char* CauseName(Cause c) {
  switch (c) {
    case Cause::kHostWork: return "host_work";
    case Cause::kAllocator: return "allocator";
    case Cause::kPageableCopy: return "pageable_copy";
    case Cause::kLaunchOverhead: return "launch_overhead";
    case Cause::kDeviceWait: return "device_wait";
    case Cause::kLaunchLatency: return "launch_latency";
    case Cause::kOther: return "other";
    default: return "?";
  }
}

const char* CauseTitle(Cause c) {
  switch (c) {
    case Cause::kHostWork: return "host work";
    case Cause::kAllocator: return "allocator";
    case Cause::kPageableCopy: return "pageable copy";
    case Cause::kLaunchOverhead: return "launch overhead";
    case Cause::kDeviceWait: return "device-side wait";
    case Cause::kLaunchLatency: return "launch latency";
    case Cause::kOther: return "other";
    default: return "?";
  }
}

const char* CauseDescription(Cause c) {
  switch (c) {
    case Cause::kHostWork:
      return "submitting thread was outside CUDA calls (CPU work, input, I/O)";
    case Cause::kAllocator:
      return "submitting thread was inside cudaMalloc/cudaFree/host allocation";
    case Cause::kPageableCopy:
      return "submitting thread was inside a copy from/to pageable host memory (staging)";
    case Cause::kLaunchOverhead:
      return "submitting thread was inside launch calls or between back-to-back launches";
    case Cause::kDeviceWait:
      return "work was queued before the device went idle but waited on the device";
    case Cause::kLaunchLatency:
      return "work was queued and started within the launch latency";
    case Cause::kOther:
      return "no evidence: no host call for the work, or inside sync/query calls";
    default: return "?";
  }
}

const char* HostStateName(HostState s) {
  switch (s) {
    case HostState::kUnsampled: return "unsampled";
    case HostState::kCpu: return "cpu";
    case HostState::kIoWait: return "io_wait";
    case HostState::kLockWait: return "lock_wait";
    case HostState::kSleep: return "sleep";
    case HostState::kOther: return "other";
    default: return "?";
  }
}

HostState HostStateFromThreadState(uint8_t state) {
  switch (state) {  // gpustall.trace.ThreadState
    case 0: return HostState::kUnsampled;         // unknown: a sample that says where, not how
    case 1: case 2: return HostState::kCpu;       // running, runnable
    case 4: return HostState::kIoWait;
    case 5: return HostState::kLockWait;
    case 3: case 7: return HostState::kSleep;     // sleeping, explicit sleep
    default: return HostState::kOther;
  }
}

}  // namespace gs::analyzer
