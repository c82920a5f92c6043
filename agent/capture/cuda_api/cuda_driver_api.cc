// cuda_driver_api.cc — the driver descriptor table and CUPTI decoding, derived from
// cuda_driver_api.def.
#include "agent/capture/cuda_api/cuda_driver_api.h"

namespace gs {

// CudaDriverFactsOf_<NAME>(params, ok): the row's expressions evaluated on a params struct.
#define GS_CUDA_DRIVER_API(NAME, CBID, PARAMS_T, CLASS, FLAGS, EFFECT, STREAM, BYTES, COPY_KIND, DST, SRC, \
                           ADDRESS)                                                                          \
  static CudaCallFacts CudaDriverFactsOf_##NAME([[maybe_unused]] const PARAMS_T& p,                          \
                                                [[maybe_unused]] bool ok) {                                  \
    GS_CUDA_CALL_FACTS_BODY(STREAM, BYTES, COPY_KIND, DST, SRC, ADDRESS)                                     \
  }
#include "agent/capture/cuda_api/cuda_driver_api.def"
#undef GS_CUDA_DRIVER_API

const CudaApiInfo kCudaDriverApiInfo[kCudaDriverApiCount] = {
#define GS_CUDA_DRIVER_API(NAME, CBID, PARAMS_T, CLASS, FLAGS, EFFECT, ...)                \
  {#NAME, CUPTI_DRIVER_TRACE_CBID_##CBID, ApiClass::CLASS, static_cast<uint8_t>(FLAGS),    \
   CudaApiEffect::EFFECT, true},
#include "agent/capture/cuda_api/cuda_driver_api.def"
#undef GS_CUDA_DRIVER_API
};

bool CudaDriverApiFromCupti(uint32_t cbid, CudaDriverApi* api) {
  switch (cbid) {
#define GS_CUDA_DRIVER_API(NAME, CBID, ...) \
  case CUPTI_DRIVER_TRACE_CBID_##CBID:      \
    *api = CudaDriverApi::k_##NAME;         \
    return true;
#include "agent/capture/cuda_api/cuda_driver_api.def"
#undef GS_CUDA_DRIVER_API
    default:
      return false;
  }
}

CudaCallFacts CudaDriverFactsFromCuptiParams(CudaDriverApi api, const void* params, bool ok) {
  switch (api) {
#define GS_CUDA_DRIVER_API(NAME, CBID, PARAMS_T, ...)                                  \
  case CudaDriverApi::k_##NAME: {                                                      \
    static const PARAMS_T kNone{};                                                     \
    const PARAMS_T& p = params ? *static_cast<const PARAMS_T*>(params) : kNone;        \
    return CudaDriverFactsOf_##NAME(p, ok);                                            \
  }
#include "agent/capture/cuda_api/cuda_driver_api.def"
#undef GS_CUDA_DRIVER_API
    case CudaDriverApi::kCount:
      break;
  }
  return CudaCallFacts{};
}

const char* CudaDriverApiName(uint16_t cbid) {
  CudaDriverApi api;
  return CudaDriverApiFromCupti(cbid, &api) ? InfoOf(api).name : nullptr;
}

}  // namespace gs
