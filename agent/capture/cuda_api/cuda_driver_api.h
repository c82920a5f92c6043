// cuda_driver_api.h — the CUDA driver functions the agent records from CUPTI's DRIVER_API
// callbacks, as data derived from cuda_driver_api.def (the runtime's counterpart: cuda_api.h).
//
// The rows reuse the runtime table's types (CudaApiInfo, CudaCallFacts): a driver call becomes an
// ApiCallEvent through the same builder (api_call_builder.h) with ApiSource::kCuptiDriverCallback
// and its CUPTI driver cbid as api_id.
//
// Everything here is constant data and pure functions: thread-safe, no allocation.
#ifndef GPUSTALL_AGENT_CAPTURE_CUDA_API_CUDA_DRIVER_API_H_
#define GPUSTALL_AGENT_CAPTURE_CUDA_API_CUDA_DRIVER_API_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>

#include "agent/capture/cuda_api/cuda_api.h"

namespace gs {

// One enumerator per row of cuda_driver_api.def: k_cuLaunchKernel, k_cuMemcpyHtoDAsync_v2, ...
enum class CudaDriverApi : uint16_t {
#define GS_CUDA_DRIVER_API(NAME, ...) k_##NAME,
#include "agent/capture/cuda_api/cuda_driver_api.def"
#undef GS_CUDA_DRIVER_API
  kCount
};
inline constexpr size_t kCudaDriverApiCount = static_cast<size_t>(CudaDriverApi::kCount);

// Indexed by CudaDriverApi; cupti_cbid is the CUPTI_DRIVER_TRACE_CBID_* of the row.
extern const CudaApiInfo kCudaDriverApiInfo[kCudaDriverApiCount];

inline const CudaApiInfo& InfoOf(CudaDriverApi api) { return kCudaDriverApiInfo[static_cast<size_t>(api)]; }

// The table row of a CUPTI driver-API cbid, if the table has one.
bool CudaDriverApiFromCupti(uint32_t cbid, CudaDriverApi* api);

// Facts of a driver call from CUPTI's functionParams for `api` (null params: the row's defaults).
CudaCallFacts CudaDriverFactsFromCuptiParams(CudaDriverApi api, const void* params, bool ok);

// The table's name of a CUPTI driver cbid (nullptr when the table has no such row).
const char* CudaDriverApiName(uint16_t cbid);

}  // namespace gs

#endif  // GPUSTALL_AGENT_CAPTURE_CUDA_API_CUDA_DRIVER_API_H_
