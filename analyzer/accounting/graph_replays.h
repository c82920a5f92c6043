// graph_replays.h — the kernels CUDA graph launches replayed, by the code that captured them.
//
// A graph replay (cudaGraphLaunch: torch.compile's reduce-overhead mode, torch.cuda.graphs) runs
// many kernels from one host call, so the replay's stack says only where the graph was launched.
// Which code put the slow kernels into the graph is the stack of the capture-time call that made
// each node: a replayed kernel names its executable graph's node, that node is a clone
// (cudaGraphInstantiate) of a captured node, and the captured node was made inside a launch on
// the capturing stream, whose API call record has the capture-time stack
// (tests/simgpu/CUPTI_CORRELATION.md fact 10, proto/FORMAT.md "CUDA graph nodes"). Here the
// replayed kernels' device time is summed per executable node, and at the end each node is
// followed back to that call and summed per call site (ChargeKey: the call's stack).
//
// Memory: a few words per graph node and per node-making call, never per kernel.
// Thread safety: one per trace, fed from the thread that reads it.
#ifndef GPUSTALL_ANALYZER_ACCOUNTING_GRAPH_REPLAYS_H_
#define GPUSTALL_ANALYZER_ACCOUNTING_GRAPH_REPLAYS_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/model/types.h"

namespace gs::analyzer {

class GraphReplayAccounting {
 public:
  // Nodes come before the calls they were made in (RecordSink::OnGraphNode).
  void AddNode(const GraphNode& node);
  // Every API call; keeps the ones that made a node.
  void AddCall(const ApiCall& call) {
    if (!wanted_.empty()) AddCallSlow(call);
  }
  void AddKernel(uint64_t node, const GpuActivity& kernel);

  struct Site {
    uint64_t key = 0;        // ChargeKey of the capture-time call (gap_classifier.h)
    uint32_t function = 0;   // its API function
    TimeNs device_ns = 0;    // replayed kernels' device time
    uint64_t kernels = 0;    // replayed kernels
    uint64_t nodes = 0;      // captured nodes behind them
  };
  struct Result {
    uint64_t kernels = 0;    // every replayed kernel
    TimeNs device_ns = 0;
    uint64_t unresolved_kernels = 0;  // no capture-time call found (not traced, or CUPTI without node callbacks)
    TimeNs unresolved_ns = 0;
    std::vector<Site> sites;  // unsorted
  };
  Result Finish() const;

 private:
  void AddCallSlow(const ApiCall& call);

  struct Replayed {
    TimeNs ns = 0;
    uint64_t kernels = 0;
  };
  absl::flat_hash_map<uint64_t, uint64_t> original_of_;     // clone -> captured node
  absl::flat_hash_map<uint64_t, uint32_t> made_in_;         // captured node -> call correlation
  absl::flat_hash_map<uint32_t, bool> wanted_;              // correlations that made a node
  absl::flat_hash_map<uint32_t, ApiCall> makers_;           // those calls, once seen
  absl::flat_hash_map<uint64_t, Replayed> replayed_;        // executable node -> its kernels
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_ACCOUNTING_GRAPH_REPLAYS_H_
