// api_graph.cc — graph objects: instantiation and destruction (stream capture and cudaGraphLaunch,
// which take a stream, are in api_streamed.cc; the model is driver/graphs.cc's).
#include "cudart/api_call.h"

using simgpu::ApiCall;

namespace {

// Both instantiation entry points; the flags (auto-free, upload, device launch, priority) change
// nothing simgpu models.
cudaError_t Instantiate(cudaGraphExec_t* pGraphExec, cudaGraph_t graph) {
  auto* g = reinterpret_cast<simgpu::Graph*>(graph);
  if (pGraphExec == nullptr || g == nullptr || !simgpu::IsGraph(g)) return cudaErrorInvalidValue;
  simgpu::GraphExec* exec = nullptr;
  const cudaError_t e = simgpu::InstantiateGraph(g, &exec);
  *pGraphExec = reinterpret_cast<cudaGraphExec_t>(exec);
  return e;
}

}  // namespace

extern "C" {

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* pGraphExec, cudaGraph_t graph, unsigned long long flags) {
  SG_API(cudaGraphInstantiate_v12000, pGraphExec, graph, flags);
  return call.Finish(Instantiate(pGraphExec, graph));
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* pGraphExec, cudaGraph_t graph,
                                          unsigned long long flags) {
  SG_API(cudaGraphInstantiateWithFlags_v11040, pGraphExec, graph, flags);
  return call.Finish(Instantiate(pGraphExec, graph));
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec) {
  SG_API(cudaGraphExecDestroy_v10000, graphExec);
  auto* exec = reinterpret_cast<simgpu::GraphExec*>(graphExec);
  if (exec == nullptr) return call.Finish(cudaErrorInvalidValue);
  return call.Finish(simgpu::DestroyGraphExec(exec));
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  SG_API(cudaGraphDestroy_v10000, graph);
  auto* g = reinterpret_cast<simgpu::Graph*>(graph);
  if (g == nullptr) return call.Finish(cudaErrorInvalidValue);
  return call.Finish(simgpu::DestroyGraph(g));
}

}  // extern "C"
