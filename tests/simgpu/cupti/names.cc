// Names and versions: cuptiGetVersion, cuptiGetResultString, cuptiGetErrorMessage,
// cuptiGetCallbackName, cuptiSupportedDomains. The tables are generated from the CUDA 13 headers
// (GenerateNameTables.cmake), and the strings match what NVIDIA's libcupti 13.0 returns.
#include <cupti.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>

#include "release.h"

namespace simgpu_cupti {
namespace {

struct NameEntry {
  uint32_t id;
  const char* name;
};

#include "cupti_name_tables.inc"

template <size_t N>
const char* Lookup(const NameEntry (&table)[N], uint32_t id) {
  auto it = std::find_if(std::begin(table), std::end(table),
                         [id](const NameEntry& e) { return e.id == id; });
  return it == std::end(table) ? nullptr : it->name;
}

CUpti_CallbackDomain kDomains[] = {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RUNTIME_API,
                                   CUPTI_CB_DOMAIN_RESOURCE,   CUPTI_CB_DOMAIN_SYNCHRONIZE,
                                   CUPTI_CB_DOMAIN_NVTX,       CUPTI_CB_DOMAIN_STATE};

}  // namespace
}  // namespace simgpu_cupti

extern "C" {

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t* version) {
  if (version == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *version = simgpu_cupti::ApiVersion();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** str) {
  if (str == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  const char* name = simgpu_cupti::Lookup(simgpu_cupti::kResultNames, result);
  if (name == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *str = name;
  return CUPTI_SUCCESS;
}

// The real 13.0 library answers the enumerator's name here too.
CUptiResult CUPTIAPI cuptiGetErrorMessage(CUptiResult result, const char** str) {
  return cuptiGetResultString(result, str);
}

CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
                                          const char** name) {
  if (name == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  const char* found = nullptr;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    found = simgpu_cupti::Lookup(simgpu_cupti::kRuntimeCallbackNames, cbid);
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    found = simgpu_cupti::Lookup(simgpu_cupti::kDriverCallbackNames, cbid);
  }
  *name = found;
  return found != nullptr ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult CUPTIAPI cuptiSupportedDomains(size_t* domainCount, CUpti_DomainTable* domainTable) {
  if (domainCount == nullptr || domainTable == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *domainCount = std::size(simgpu_cupti::kDomains);
  *domainTable = simgpu_cupti::kDomains;
  return CUPTI_SUCCESS;
}

}  // extern "C"
