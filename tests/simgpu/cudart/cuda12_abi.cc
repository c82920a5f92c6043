// cuda12_abi.cc — the CUDA 12 flavour's (libcudart.so.12) functions whose 12.x signature or struct
// differs from 13.0's (abi13.h). Compiled alone against CUDA 12.9's cuda_runtime_api.h (PyPI's
// nvidia-cuda-runtime-cu12, tools/fetch-cuda12) with __CUDA_API_VERSION_INTERNAL, as NVIDIA's own
// library is, so every legacy and versioned name is declared exactly as 12.x exports it. Each
// calls 13.0's implementation (sg13_<name>, C linkage, declared here without 13.0's types).
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda_runtime_api.h>

#include <cstring>

#include "cudart/unsupported_stub.h"

extern "C" {

// 13.0's implementations (api_device.cc, api_memory.cc, api_streamed.cc), renamed by abi13.h.
cudaError_t sg13_cudaPointerGetAttributes(void* attributes13, const void* ptr);
cudaError_t sg13_cudaStreamGetCaptureInfo(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                          unsigned long long* id, cudaGraph_t* graph,
                                          const cudaGraphNode_t** dependencies,
                                          const cudaGraphEdgeData** edge_data, size_t* count);
cudaError_t sg13_cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                               unsigned long long* id, cudaGraph_t* graph,
                                               const cudaGraphNode_t** dependencies,
                                               const cudaGraphEdgeData** edge_data, size_t* count);

// 12.x's cudaPointerAttributes is the first 24 bytes of 13.0's (type, device, devicePointer,
// hostPointer at the same offsets); 13.0's is 88 bytes, written into a buffer of our own.
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr) {
  if (attributes == nullptr) return sg13_cudaPointerGetAttributes(nullptr, ptr);
  alignas(8) unsigned char attributes13[256];
  const cudaError_t e = sg13_cudaPointerGetAttributes(attributes13, ptr);
  if (e == cudaSuccess) std::memcpy(attributes, attributes13, sizeof(*attributes));
  return e;
}
static_assert(sizeof(cudaPointerAttributes) == 24, "CUDA 12's cudaPointerAttributes");

// cudaDeviceProp differs in 12.x (1032 bytes in 12.9, fields 13.0 removed) and before 12.0 (the
// unversioned name): not modelled for CUDA 12 programs.
cudaError_t cudaGetDeviceProperties(cudaDeviceProp*, int) {
  return static_cast<cudaError_t>(sgUnsupported("cudaGetDeviceProperties"));
}
cudaError_t cudaGetDeviceProperties_v2(cudaDeviceProp*, int) {
  return static_cast<cudaError_t>(sgUnsupported("cudaGetDeviceProperties_v2"));
}

// Capture info: 12.x's three-argument original, _v2 (no edge data) and _v3 (13.0's signature).
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                     unsigned long long* id) {
  return sg13_cudaStreamGetCaptureInfo(stream, status, id, nullptr, nullptr, nullptr, nullptr);
}
cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                          unsigned long long* id) {
  return sg13_cudaStreamGetCaptureInfo_ptsz(stream, status, id, nullptr, nullptr, nullptr, nullptr);
}
cudaError_t cudaStreamGetCaptureInfo_v2(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                        unsigned long long* id, cudaGraph_t* graph,
                                        const cudaGraphNode_t** dependencies, size_t* count) {
  return sg13_cudaStreamGetCaptureInfo(stream, status, id, graph, dependencies, nullptr, count);
}
cudaError_t cudaStreamGetCaptureInfo_v2_ptsz(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                             unsigned long long* id, cudaGraph_t* graph,
                                             const cudaGraphNode_t** dependencies, size_t* count) {
  return sg13_cudaStreamGetCaptureInfo_ptsz(stream, status, id, graph, dependencies, nullptr, count);
}
cudaError_t cudaStreamGetCaptureInfo_v3(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                        unsigned long long* id, cudaGraph_t* graph,
                                        const cudaGraphNode_t** dependencies,
                                        const cudaGraphEdgeData** edge_data, size_t* count) {
  return sg13_cudaStreamGetCaptureInfo(stream, status, id, graph, dependencies, edge_data, count);
}
cudaError_t cudaStreamGetCaptureInfo_v3_ptsz(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                             unsigned long long* id, cudaGraph_t* graph,
                                             const cudaGraphNode_t** dependencies,
                                             const cudaGraphEdgeData** edge_data, size_t* count) {
  return sg13_cudaStreamGetCaptureInfo_ptsz(stream, status, id, graph, dependencies, edge_data, count);
}

}  // extern "C"
