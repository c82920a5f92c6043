#include "injected_faults.h"

#include <cstdlib>
#include <cstring>

namespace simgpu_cupti {

const InjectedFaults& Faults() {
  // Read lazily rather than in a constructor: a test may setenv() before its first CUPTI call.
  static const InjectedFaults faults = [] {
    InjectedFaults f;
    const char* fail = std::getenv("SIMGPU_CUPTI_FAIL");
    f.no_driver = fail != nullptr && std::strcmp(fail, "1") == 0;
    const char* other = std::getenv("SIMGPU_CUPTI_SUBSCRIBER");
    if (other != nullptr && other[0] != '\0') f.other_subscriber = strdup(other);  // leaked on purpose
    return f;
  }();
  return faults;
}

CUptiResult InjectedFailure(FaultSite site) {
  const InjectedFaults& f = Faults();
  if (f.no_driver) return CUPTI_ERROR_UNKNOWN;
  if (f.other_subscriber != nullptr && site != FaultSite::kNeedsDriver) {
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  return CUPTI_SUCCESS;
}

}  // namespace simgpu_cupti
