// graphs.cc — stream capture, CUDA graphs and their replay (driver.h, "stream capture and graphs").
//
// The model, from NVIDIA's CUDA Programming Guide ("CUDA Graphs", "Creating a Graph Using Stream
// Capture") and runtime API reference (cudaStreamBeginCapture, cudaStreamEndCapture,
// cudaGraphInstantiate, cudaGraphLaunch):
//   * work launched into a capturing stream is "not enqueued for execution" but appended to the
//     graph being captured; cudaStreamEndCapture returns the graph and ends the capture;
//   * capture may not be initiated on the legacy NULL stream;
//   * synchronising a capturing stream is prohibited: it fails and invalidates the capture, and
//     cudaStreamEndCapture then returns cudaErrorStreamCaptureInvalidated;
//   * an instantiated graph is launched into a stream as one unit, ordered after the stream's
//     earlier work; its nodes run in their dependency order (here: capture order on one stream,
//     a chain);
//   * async copies and memsets into a capturing stream become memcpy and memset nodes ("Creating
//     a Graph Using Stream Capture": the work is captured, not run); synchronous ones are
//     prohibited and invalidate the capture;
//   * CUPTI (tests/simgpu/CUPTI_CORRELATION.md, fact 7): every kernel, copy and memset of one
//     graph launch carries the launch's correlation id, a graphId and a graphNodeId;
//   * CUPTI's resource domain (fact 10): a captured kernel becomes a node inside its launch call
//     (GRAPHNODE_CREATED), cudaGraphInstantiate clones each node (CREATED, then CLONED with the
//     original), and a replayed kernel's graphNodeId is its clone's id.
// Not modelled: other nodes (events, host functions, frees, and copies the host takes part in —
// pageable staging, host to host — on a capturing stream are refused and invalidate the
// capture), cross-stream capture, explicit graph
// construction (cudaGraphAddKernelNode, ...), graph updates. Open, to check on a GPU: whether a
// kernel record's graphId is the source graph's id (cuptiGetGraphId) or the executable's
// (cuptiGetGraphExecId); simgpu reports the source graph's id.
//
// Objects are never freed (internal.h, "Ownership"): a destroyed graph is marked dead, so a stale
// handle is an error, not a crash.
#include <atomic>
#include <mutex>
#include <set>
#include <vector>

#include "driver/internal.h"

namespace simgpu {

struct GraphNode {
  uint64_t id;
  LaunchArgs launch;                // a kernel node
  std::shared_ptr<OpHandle> op;     // a copy or memset node: its op as captured (timeline.cc)
  int type = 0;                     // CUgraphNodeType: 0 kernel, 1 memcpy, 2 memset
};

// Nodes are allocated one by one and never freed: their addresses are the CUgraphNode handles
// that graph node events carry (tool_hooks.h).
struct Graph {
  uint32_t id;
  int device;
  std::vector<const GraphNode*> nodes;
  bool capturing = false;    // still being captured
  bool invalidated = false;  // a refused operation happened during its capture
  unsigned long long capture_id = 0;
  bool live = true;
};

struct GraphExec {
  uint32_t id;
  uint32_t graph_id;  // the graph it was instantiated from
  int device;
  std::vector<const GraphNode*> nodes;
  bool live = true;
};

namespace {

std::mutex g_mu;  // guards every Graph and GraphExec, and the sets below
std::set<const Graph*>& Graphs() {
  static auto* all = new std::set<const Graph*>;
  return *all;
}
std::set<const GraphExec*>& Execs() {
  static auto* all = new std::set<const GraphExec*>;
  return *all;
}
std::atomic<uint32_t> g_next_graph_id{1};
std::atomic<uint64_t> g_next_node_id{1};
std::atomic<unsigned long long> g_next_capture_id{1};

bool LiveGraph(const Graph* g) { return Graphs().count(g) != 0 && g->live; }

}  // namespace

namespace {

// The tool hook of a node event, outside g_mu (a tool may call back into the driver).
void ReportGraphNode(uint32_t cbid, const Graph* g, const GraphExec* exec, const GraphNode* node,
                     const GraphNode* original) {
  const SimgpuToolHooks* h = CurrentHooks();
  if (h == nullptr || h->on_graph_node == nullptr) return;
  SimgpuGraphNodeEvent ev{};
  ev.cbid = cbid;
  ev.context = ContextHandle(g->device);
  ev.graph = const_cast<Graph*>(g);
  ev.graph_exec = const_cast<GraphExec*>(exec);
  ev.node = const_cast<GraphNode*>(node);
  ev.original_node = const_cast<GraphNode*>(original);
  ev.node_id = node->id;
  ev.original_node_id = original != nullptr ? original->id : 0;
  ev.graph_id = g->id;
  ev.node_type = node->type;
  h->on_graph_node(&ev);
}

constexpr uint32_t kGraphNodeCreated = 13;  // CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED
constexpr uint32_t kGraphNodeCloned = 20;   // CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED

}  // namespace

namespace {
cudaError_t AppendNode(Graph* g, const GraphNode* node) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g->nodes.push_back(node);
  }
  ReportGraphNode(kGraphNodeCreated, g, nullptr, node, nullptr);
  return cudaSuccess;
}
}  // namespace

cudaError_t CaptureKernel(Graph* g, const LaunchArgs& a) {
  return AppendNode(g, new GraphNode{g_next_node_id.fetch_add(1), a, nullptr, 0});
}

cudaError_t CaptureOp(Graph* g, std::shared_ptr<OpHandle> op, int node_type) {
  return AppendNode(g, new GraphNode{g_next_node_id.fetch_add(1), LaunchArgs{}, std::move(op), node_type});
}

void InvalidateCapture(Graph* g) {
  std::lock_guard<std::mutex> lock(g_mu);
  g->invalidated = true;
}

cudaError_t BeginCapture(Stream* s, int mode) {
  if (mode < cudaStreamCaptureModeGlobal || mode > cudaStreamCaptureModeRelaxed) return cudaErrorInvalidValue;
  if (IsLegacyStream(s)) return cudaErrorStreamCaptureUnsupported;
  if (CapturingGraph(s) != nullptr) return cudaErrorIllegalState;
  auto* g = new Graph;
  g->id = g_next_graph_id.fetch_add(1);
  g->device = StreamDevice(s);
  g->capturing = true;
  g->capture_id = g_next_capture_id.fetch_add(1);
  {
    std::lock_guard<std::mutex> lock(g_mu);
    Graphs().insert(g);
  }
  SetCapturingGraph(s, g);
  return cudaSuccess;
}

cudaError_t EndCapture(Stream* s, Graph** graph) {
  Graph* g = CapturingGraph(s);
  if (g == nullptr) return cudaErrorIllegalState;
  SetCapturingGraph(s, nullptr);
  std::lock_guard<std::mutex> lock(g_mu);
  g->capturing = false;
  if (g->invalidated) {
    g->live = false;
    *graph = nullptr;
    return cudaErrorStreamCaptureInvalidated;
  }
  *graph = g;
  return cudaSuccess;
}

int CaptureStatus(const Stream* s, unsigned long long* id) {
  Graph* g = CapturingGraph(s);
  if (g == nullptr) return cudaStreamCaptureStatusNone;
  std::lock_guard<std::mutex> lock(g_mu);
  if (id != nullptr) *id = g->capture_id;
  return g->invalidated ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
}

bool IsGraph(const Graph* g) {
  std::lock_guard<std::mutex> lock(g_mu);
  return LiveGraph(g) && !g->capturing;
}

bool IsGraphExec(const GraphExec* e) {
  std::lock_guard<std::mutex> lock(g_mu);
  return Execs().count(e) != 0 && e->live;
}

size_t GraphNodeCount(const Graph* g) {
  std::lock_guard<std::mutex> lock(g_mu);
  return g->nodes.size();
}

cudaError_t InstantiateGraph(Graph* g, GraphExec** exec) {
  auto* e = new GraphExec;
  std::vector<const GraphNode*> originals;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (!LiveGraph(g) || g->capturing) {
      delete e;
      return cudaErrorInvalidValue;
    }
    e->id = g_next_graph_id.fetch_add(1);
    e->graph_id = g->id;
    e->device = g->device;
    // The executable's nodes are copies of the graph's, with ids of their own (header comment).
    originals = g->nodes;
    for (const GraphNode* n : originals)
      e->nodes.push_back(new GraphNode{g_next_node_id.fetch_add(1), n->launch, n->op, n->type});
    Execs().insert(e);
  }
  for (size_t i = 0; i < originals.size(); ++i) {
    ReportGraphNode(kGraphNodeCreated, g, e, e->nodes[i], nullptr);
    ReportGraphNode(kGraphNodeCloned, g, e, e->nodes[i], originals[i]);
  }
  *exec = e;
  return cudaSuccess;
}

cudaError_t LaunchGraph(GraphExec* e, Stream* s, uint32_t corr) {
  // One launch call's host cost for the whole graph: what a graph replay saves.
  WaitUntilNs(NowNs() + GetConfig().launch_host_ns);
  if (cudaError_t r = RefuseWhileCapturing(s)) return r;  // graph nodes in graphs: not modelled
  std::vector<const GraphNode*> nodes;
  uint32_t graph_id;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (Execs().count(e) == 0 || !e->live) return cudaErrorInvalidValue;
    if (e->device != StreamDevice(s)) return cudaErrorInvalidValue;
    nodes = e->nodes;
    graph_id = e->graph_id;
  }
  for (const GraphNode* n : nodes) {
    const cudaError_t r = n->op != nullptr ? ScheduleCapturedOp(s, *n->op, corr, graph_id, n->id)
                                           : ScheduleKernel(s, n->launch, corr, graph_id, n->id);
    if (r != cudaSuccess) return r;
  }
  return cudaSuccess;
}

cudaError_t DestroyGraph(Graph* g) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!LiveGraph(g) || g->capturing) return cudaErrorInvalidValue;
  g->live = false;
  return cudaSuccess;
}

cudaError_t DestroyGraphExec(GraphExec* e) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (Execs().count(e) == 0 || !e->live) return cudaErrorInvalidValue;
  e->live = false;  // launches already submitted still run (their nodes were copied)
  return cudaSuccess;
}

}  // namespace simgpu
