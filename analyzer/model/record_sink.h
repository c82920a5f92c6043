// record_sink.h — where an importer delivers model records (the analysis implements it).
//
// Records arrive in file order: per thread and per CUPTI buffer, not globally by time; sinks sort
// what they need sorted (TraceAnalyzer keeps a bounded sort window).
#ifndef GPUSTALL_ANALYZER_MODEL_RECORD_SINK_H_
#define GPUSTALL_ANALYZER_MODEL_RECORD_SINK_H_

#include "analyzer/model/trace_tables.h"
#include "analyzer/model/types.h"

namespace gs::analyzer {

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void OnApiCall(const ApiCall& call) = 0;
  virtual void OnActivity(const GpuActivity& activity) = 0;
  virtual void OnSample(const Sample& sample) = 0;
  virtual void OnMemoryEvent(const MemoryEvent& event) = 0;
  // NVTX ranges arrive when they closed (after the records inside them). Default: ignored.
  virtual void OnNvtxRange(const NvtxRange& range) { (void)range; }
  // Blocking libc calls the agent recorded (types.h HostWait), in file order. Default: ignored.
  virtual void OnHostWait(const HostWait& wait) { (void)wait; }
  // CUDA graphs: the nodes the agent saw made, each before the API calls of its chunk (so before
  // the call it was made in), and the kernels that graph launches replayed, with their
  // executable node (also delivered to OnActivity). Default: ignored.
  virtual void OnGraphNode(const GraphNode& node) { (void)node; }
  virtual void OnGraphKernel(uint64_t node, const GpuActivity& kernel) { (void)node, (void)kernel; }
  // A device described after reading began (an agent trace names each device in the chunk of its
  // first kernel, or earlier), before the records of that chunk. Default: ignored.
  virtual void OnDevice(const DeviceDescription& device) { (void)device; }
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_MODEL_RECORD_SINK_H_
