// synthetic_trace.h — builds model records by hand for unit tests: timelines whose right answer
// is known. No files: records go straight into a TraceAnalyzer.
//
//   SyntheticTrace t;
//   uint32_t stack = t.Stack({"load_batch@workload.cc:42", "train_step", "main"});
//   t.Launch(/*thread=*/1, /*enter=*/0, /*exit=*/5'000, /*start=*/10'000, /*end=*/1'000'000, stack);
//   Analysis a = t.Analyze();
//
// Times are nanoseconds. Thread safety: none.
#ifndef GPUSTALL_ANALYZER_TESTING_SYNTHETIC_TRACE_H_
#define GPUSTALL_ANALYZER_TESTING_SYNTHETIC_TRACE_H_

#include <map>
#include <string>
#include <vector>

#include "analyzer/result/analysis.h"
#include "analyzer/options/options.h"
#include "analyzer/analysis/trace_analyzer.h"
#include "analyzer/model/trace_tables.h"
#include "analyzer/model/types.h"

namespace gs::analyzer::testing {

class SyntheticTrace {
 public:
  SyntheticTrace();

  // Interned names. "fn@file.cc:42" gives a frame with file and line.
  uint32_t Function(const std::string& name, ApiClass api_class);
  uint32_t Stack(const std::vector<std::string>& functions_leaf_first);

  // A host call without device work. Returns it for further edits (valid until the next add).
  ApiCall& Call(uint64_t thread, ApiClass api_class, TimeNs enter, TimeNs exit, uint32_t stack = 0);
  // A kernel launch and its kernel (same correlation id).
  ApiCall& Launch(uint64_t thread, TimeNs enter, TimeNs exit, TimeNs start, TimeNs end,
                  uint32_t stack = 0, uint32_t device = 0, uint32_t stream = 7);
  // A copy call and its copy activity.
  ApiCall& Copy(uint64_t thread, TimeNs enter, TimeNs exit, TimeNs start, TimeNs end,
                CopyDirection dir, MemKind host_kind, uint64_t bytes, bool async,
                uint32_t stack = 0, uint32_t device = 0);
  // Device work with no host call (correlation 0).
  GpuActivity& Kernel(TimeNs start, TimeNs end, uint32_t device = 0, uint32_t stream = 7);
  // A launch configuration of `blocks` blocks of `threads` threads, without registers or shared
  // memory, for GpuActivity::launch_config; and a device of `sms` SMs without further limits. On it
  // a kernel of B blocks covers min(1, B / sms) of the device (occupancy/occupancy.h FillOf).
  uint32_t Config(uint32_t blocks, uint32_t threads);
  void AddDevice(uint32_t index, uint32_t sms);
  void AddSample(uint64_t thread, TimeNs t, uint32_t stack, uint8_t state);
  // A recorded blocking libc call [start, end) (types.h HostWait).
  void AddWait(uint64_t thread, TimeNs start, TimeNs end, uint32_t stack, uint8_t state);

  std::vector<ApiCall>& calls() { return calls_; }
  std::vector<GpuActivity>& activities() { return activities_; }
  InMemoryTables& tables() { return tables_; }
  TraceInfo& info() { return info_; }

  // Feeds everything (the devices, calls, samples and waits first, then activities in the order
  // held — tests shuffle activities() to check ordering) and returns the trace's result.
  TraceResult Run(const AnalysisOptions& options = AnalysisOptions()) const;
  Analysis Analyze(const AnalysisOptions& options = AnalysisOptions()) const;

 private:
  uint32_t Name(const std::string& s);
  InMemoryTables tables_;
  TraceInfo info_;
  std::map<std::string, uint32_t> strings_, functions_;
  std::map<std::vector<std::string>, uint32_t> stacks_;
  uint32_t next_string_ = 1, next_function_ = 1, next_frame_ = 1, next_stack_ = 1;
  uint32_t next_correlation_ = 1;
  uint32_t next_config_ = 1;
  uint32_t launch_fn_, memcpy_fn_, memcpy_async_fn_;
  std::vector<ApiCall> calls_;
  std::vector<GpuActivity> activities_;
  std::vector<Sample> samples_;
  std::vector<HostWait> waits_;
};

// An NVTX range of `thread`, `name` and `domain` string ids (TraceTables), `depth` 0 outermost.
NvtxRange MakeNvtxRange(uint64_t thread, uint32_t name, TimeNs start, TimeNs end, uint32_t depth = 0,
                        uint32_t domain = 0);

}  // namespace gs::analyzer::testing

#endif  // GPUSTALL_ANALYZER_TESTING_SYNTHETIC_TRACE_H_
