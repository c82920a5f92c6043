// cuda_api.cc — the descriptor table and CUPTI decoding, derived from cuda_api.def.
#include "agent/capture/cuda_api/cuda_api.h"

#include "agent/capture/cuda_api/cuda_driver_api.h"

namespace gs {

const CudaApiInfo kCudaApiInfo[kCudaApiCount] = {
#define GS_CUDA_API(NAME, CBID, PARAMS_T, CLASS, FLAGS, EFFECT, ...)                         \
  {#NAME, CUPTI_RUNTIME_TRACE_CBID_##CBID, ApiClass::CLASS, static_cast<uint8_t>(FLAGS),     \
   CudaApiEffect::EFFECT, ApiClass::CLASS != ApiClass::kOther},
#include "agent/capture/cuda_api/cuda_api.def"
#undef GS_CUDA_API
};

bool CudaApiFromCupti(uint32_t cbid, CudaApi* api) {
  switch (cbid) {
#define GS_CUDA_API(NAME, CBID, ...)      \
  case CUPTI_RUNTIME_TRACE_CBID_##CBID: \
    *api = CudaApi::k_##NAME;           \
    return true;
#include "agent/capture/cuda_api/cuda_api.def"
#undef GS_CUDA_API
    default:
      return false;
  }
}

CudaCallFacts CudaFactsFromCuptiParams(CudaApi api, const void* params, bool ok) {
  switch (api) {
#define GS_CUDA_API(NAME, CBID, PARAMS_T, ...)                                           \
  case CudaApi::k_##NAME: {                                                              \
    static const PARAMS_T kNone{};                                                       \
    const PARAMS_T& p = params ? *static_cast<const PARAMS_T*>(params) : kNone;          \
    return CudaFactsOf_##NAME(p, ok);                                                    \
  }
#include "agent/capture/cuda_api/cuda_api.def"
#undef GS_CUDA_API
    case CudaApi::kCount:
      break;
  }
  return CudaCallFacts{};
}

namespace {
// Each row's PARAMS_T by name, for cuda_launch.def's expressions.
#define GS_CUDA_API(NAME, CBID, PARAMS_T, ...) using ParamsOf_##NAME = PARAMS_T;
#include "agent/capture/cuda_api/cuda_api.def"
#undef GS_CUDA_API
}  // namespace

bool KernelLaunchShapeOf(CudaApi api, const void* params, KernelLaunchShape* out) {
  if (params == nullptr) return false;
  dim3 grid, block;
  size_t shared = 0;
  switch (api) {
#define GS_CUDA_LAUNCH(NAME, GRID, BLOCK, DYNAMIC_SHARED)               \
  case CudaApi::k_##NAME: {                                             \
    const ParamsOf_##NAME& p = *static_cast<const ParamsOf_##NAME*>(params); \
    grid = GRID;                                                        \
    block = BLOCK;                                                      \
    shared = DYNAMIC_SHARED;                                            \
    break;                                                              \
  }
#include "agent/capture/cuda_api/cuda_launch.def"
#undef GS_CUDA_LAUNCH
    default:
      return false;
  }
  if (grid.x == 0 || block.x == 0) return false;  // no configuration (a null launch config)
  *out = KernelLaunchShape{{grid.x, grid.y, grid.z}, {block.x, block.y, block.z},
                           static_cast<uint32_t>(shared > UINT32_MAX ? UINT32_MAX : shared)};
  return true;
}

const char* CudaApiName(ApiSource source, uint16_t api_id) {
  if (source == ApiSource::kInterposer) {
    return api_id < kCudaApiCount ? kCudaApiInfo[api_id].name : nullptr;
  }
  if (source == ApiSource::kCuptiDriverCallback) return CudaDriverApiName(api_id);
  CudaApi api;
  return CudaApiFromCupti(api_id, &api) ? InfoOf(api).name : nullptr;
}

}  // namespace gs
