// record_sink.h — where an importer delivers model records (the analysis implements it).
//
// Records arrive in file order: per thread and per CUPTI buffer, not globally by time; sinks sort
// what they need sorted (TraceAnalyzer keeps a bounded sort window).
#ifndef GPUSTALL_ANALYZER_MODEL_RECORD_SINK_H_
#define GPUSTALL_ANALYZER_MODEL_RECORD_SINK_H_

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
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_MODEL_RECORD_SINK_H_
