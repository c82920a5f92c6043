// injected_faults.h — real-CUPTI failure modes that a profiler must survive, switched on by
// environment variables so that tests can reach the agent's degrade paths without a real tool.
//
//   SIMGPU_CUPTI_SUBSCRIBER=<name>  another tool (nsys, ncu, a second CUPTI) already holds CUPTI:
//                                   cuptiSubscribe(_v2) and cuptiActivityEnable(AndDump) fail with
//                                   CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, and _v2 writes
//                                   <name> into oldSubscriberName.
//   SIMGPU_CUPTI_FAIL=1             behave like the real libcupti 13.0 U1 on a machine without a
//                                   driver (observed): cuptiSubscribe, cuptiActivityEnable,
//                                   timestamp-callback registration, thread-id type, flushes and
//                                   external correlation return CUPTI_ERROR_UNKNOWN (999);
//                                   cuptiGetVersion, cuptiGetTimestamp, cuptiActivityRegisterCallbacks,
//                                   cuptiFinalize and the name lookups succeed.
//
// Thread safety: read once, on first use (any thread); the result is immutable afterwards.
#ifndef GPUSTALL_TESTS_SIMGPU_CUPTI_INJECTED_FAULTS_H_
#define GPUSTALL_TESTS_SIMGPU_CUPTI_INJECTED_FAULTS_H_

#include <cupti.h>

namespace simgpu_cupti {

struct InjectedFaults {
  bool no_driver = false;               // SIMGPU_CUPTI_FAIL=1
  const char* other_subscriber = nullptr;  // SIMGPU_CUPTI_SUBSCRIBER, or nullptr when unset/empty
};

// The faults of this process; read from the environment on the first call.
const InjectedFaults& Faults();

// Which entry point asks, for InjectedFailure().
enum class FaultSite {
  kSubscribe,       // cuptiSubscribe, cuptiSubscribe_v2
  kActivityEnable,  // cuptiActivityEnable, cuptiActivityEnableAndDump
  kNeedsDriver,     // the other calls that the real library fails without a driver
};

// CUPTI_SUCCESS, or the error the entry point at `site` returns under the injected faults.
CUptiResult InjectedFailure(FaultSite site);

}  // namespace simgpu_cupti

#endif  // GPUSTALL_TESTS_SIMGPU_CUPTI_INJECTED_FAULTS_H_
