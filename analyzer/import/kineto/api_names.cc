#include "analyzer/import/kineto/api_names.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace gs::analyzer::kineto {

namespace {

// The agent's flag bits, as cuda_api.def spells them (agent/record/events.h): only "async" matters here.
constexpr unsigned kApiFlagAsync = 1u << 0;
constexpr unsigned kApiFlagPerThreadStream = 1u << 1;

using Table = absl::flat_hash_map<std::string, ApiNameClass>;

Table Build() {
  Table t;
  // 1. The agent's table: every interposed runtime function.
#define GS_CUDA_API(NAME, CBID, PARAMS_T, CLASS, FLAGS, ...) \
  t[#NAME] = ApiNameClass{ApiClass::CLASS, ((FLAGS) & kApiFlagAsync) != 0};
#include "agent/capture/cuda_api/cuda_api.def"
#undef GS_CUDA_API
  (void)kApiFlagPerThreadStream;
  // 2. What traces taken by CUPTI or roctracer name and the agent does not interpose.
  const struct {
    const char* name;
    ApiClass c;
    bool async;
  } extra[] = {
      {"cudaGraphLaunch", ApiClass::kLaunch, true},
      {"cudaLaunchCooperativeKernel", ApiClass::kLaunch, true},
      {"cudaLaunchKernelExC_v11060", ApiClass::kLaunch, true},
      {"cudaMemcpy2DToArray", ApiClass::kMemcpy, false},
      {"cudaMemcpyToSymbol", ApiClass::kMemcpy, false},
      {"cudaMemcpyFromSymbol", ApiClass::kMemcpy, false},
      {"cudaStreamCreateWithPriority", ApiClass::kOther, false},
      {"cuLaunchKernel", ApiClass::kLaunch, true},
      {"cuLaunchKernelEx", ApiClass::kLaunch, true},
      {"cuLaunchCooperativeKernel", ApiClass::kLaunch, true},
      {"cuGraphLaunch", ApiClass::kLaunch, true},
      {"cuMemcpyAsync", ApiClass::kMemcpy, true},
      {"cuMemcpyHtoDAsync", ApiClass::kMemcpy, true},
      {"cuMemcpyDtoHAsync", ApiClass::kMemcpy, true},
      {"cuMemcpyDtoDAsync", ApiClass::kMemcpy, true},
      {"cuMemcpy", ApiClass::kMemcpy, false},
      {"cuMemcpyHtoD", ApiClass::kMemcpy, false},
      {"cuMemcpyDtoH", ApiClass::kMemcpy, false},
      {"cuMemcpyDtoD", ApiClass::kMemcpy, false},
      {"cuMemsetD8Async", ApiClass::kMemset, true},
      {"cuMemsetD32Async", ApiClass::kMemset, true},
      {"cuMemAlloc", ApiClass::kMalloc, false},
      {"cuMemAllocAsync", ApiClass::kMalloc, true},
      {"cuMemFree", ApiClass::kFree, false},
      {"cuMemFreeAsync", ApiClass::kFree, true},
      {"cuMemHostAlloc", ApiClass::kHostAlloc, false},
      {"cuMemAllocHost", ApiClass::kHostAlloc, false},
      {"cuMemFreeHost", ApiClass::kHostFree, false},
      {"cuStreamSynchronize", ApiClass::kStreamSync, false},
      {"cuCtxSynchronize", ApiClass::kDeviceSync, false},
      {"cuEventSynchronize", ApiClass::kEventSync, false},
      {"cuStreamWaitEvent", ApiClass::kStreamWaitEvent, false},
      {"cuEventRecord", ApiClass::kEventRecord, false},
      {"cuStreamQuery", ApiClass::kQuery, false},
      {"cuEventQuery", ApiClass::kQuery, false},
      // HIP names that are not cuda* with "hip" for "cuda" (those are found by ClassifyApiName).
      {"hipMemcpyWithStream", ApiClass::kMemcpy, false},
      {"hipExtModuleLaunchKernel", ApiClass::kLaunch, true},
      {"hipModuleLaunchKernel", ApiClass::kLaunch, true},
      {"hipExtLaunchKernel", ApiClass::kLaunch, true},
      {"hipHccModuleLaunchKernel", ApiClass::kLaunch, true},
  };
  for (const auto& e : extra) t.try_emplace(e.name, ApiNameClass{e.c, e.async});
  return t;
}

const Table& TheTable() {
  static const Table* t = new Table(Build());  // never destroyed: no exit-order hazards
  return *t;
}

}  // namespace

ApiNameClass ClassifyApiName(absl::string_view name) {
  const Table& t = TheTable();
  auto look = [&t](absl::string_view n) -> const ApiNameClass* {
    auto it = t.find(std::string(n));
    return it == t.end() ? nullptr : &it->second;
  };
  if (const ApiNameClass* c = look(name)) return *c;
  // Versioned spellings (cuMemcpyHtoDAsync_v2, cudaLaunchKernel_v7000).
  absl::string_view base = name;
  if (size_t v = base.rfind("_v"); v != absl::string_view::npos && v + 2 < base.size()) {
    base = base.substr(0, v);
    if (const ApiNameClass* c = look(base)) return *c;
  }
  // HIP mirrors the runtime: hipMemcpyAsync is cudaMemcpyAsync.
  if (absl::ConsumePrefix(&base, "hip")) {
    if (const ApiNameClass* c = look(std::string("cuda") + std::string(base))) return *c;
  }
  return {};
}

}  // namespace gs::analyzer::kineto
