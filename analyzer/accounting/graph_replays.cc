#include "analyzer/accounting/graph_replays.h"

#include "analyzer/classify/gap_classifier.h"

namespace gs::analyzer {

void GraphReplayAccounting::AddNode(const GraphNode& node) {
  if (node.node == 0) return;
  if (node.original != 0) {
    original_of_[node.node] = node.original;
  } else if (node.correlation != 0) {
    made_in_[node.node] = node.correlation;
    wanted_[node.correlation] = true;
  }
}

void GraphReplayAccounting::AddCallSlow(const ApiCall& call) {
  if (wanted_.contains(call.correlation)) makers_.try_emplace(call.correlation, call);
}

void GraphReplayAccounting::AddKernel(uint64_t node, const GpuActivity& kernel) {
  Replayed& r = replayed_[node];
  r.ns += kernel.end_ns - kernel.start_ns;
  ++r.kernels;
}

GraphReplayAccounting::Result GraphReplayAccounting::Finish() const {
  Result out;
  absl::flat_hash_map<uint64_t, size_t> site_of;  // ChargeKey -> index in out.sites
  for (const auto& [node, r] : replayed_) {
    out.kernels += r.kernels;
    out.device_ns += r.ns;
    // An executable node is a clone of a captured one; a node made directly (no clone record)
    // stands for itself.
    const auto original = original_of_.find(node);
    const uint64_t captured = original != original_of_.end() ? original->second : node;
    const auto made = made_in_.find(captured);
    const auto maker = made != made_in_.end() ? makers_.find(made->second) : makers_.end();
    if (maker == makers_.end()) {
      out.unresolved_kernels += r.kernels;
      out.unresolved_ns += r.ns;
      continue;
    }
    const uint64_t key = ChargeKey(maker->second);
    auto [it, inserted] = site_of.try_emplace(key, out.sites.size());
    if (inserted) out.sites.push_back(Site{key, maker->second.function});
    Site& s = out.sites[it->second];
    s.device_ns += r.ns;
    s.kernels += r.kernels;
    ++s.nodes;
  }
  return out;
}

}  // namespace gs::analyzer
