// api_names.h — the class of a CUDA/HIP runtime or driver call, from its name alone (a Kineto
// trace names its host calls and nothing else).
//
// Runtime functions come from agent/capture/cuda_api/cuda_api.def, the agent's one table,
// included here as data (its X-macro rows, no shim or agent code is linked). What that table does
// not hold — driver calls (cuLaunchKernel from Triton, cuMemcpy...), graph launches, the *_v2
// spellings and HIP's names — is in api_names.cc's one supplementary list, because the agent
// interposes the runtime only and these appear in traces taken by CUPTI/roctracer.
#ifndef GPUSTALL_ANALYZER_IMPORT_KINETO_API_NAMES_H_
#define GPUSTALL_ANALYZER_IMPORT_KINETO_API_NAMES_H_

#include "absl/strings/string_view.h"

#include "analyzer/model/types.h"

namespace gs::analyzer::kineto {

struct ApiNameClass {
  ApiClass api_class = ApiClass::kOther;
  bool async = false;  // returns before the device work is done (cudaMemcpyAsync, launches)
};

// kOther for names it does not know.
ApiNameClass ClassifyApiName(absl::string_view name);

}  // namespace gs::analyzer::kineto

#endif  // GPUSTALL_ANALYZER_IMPORT_KINETO_API_NAMES_H_
