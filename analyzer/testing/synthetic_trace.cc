#include "analyzer/testing/synthetic_trace.h"

#include <cstdlib>

#include "analyzer/result/analysis_builder.h"

namespace gs::analyzer::testing {

namespace {
const char* DefaultName(ApiClass c) {
  switch (c) {
    case ApiClass::kLaunch: return "cudaLaunchKernel";
    case ApiClass::kMemcpy: return "cudaMemcpy";
    case ApiClass::kMemset: return "cudaMemsetAsync";
    case ApiClass::kMalloc: return "cudaMalloc";
    case ApiClass::kFree: return "cudaFree";
    case ApiClass::kHostAlloc: return "cudaMallocHost";
    case ApiClass::kHostFree: return "cudaFreeHost";
    case ApiClass::kStreamSync: return "cudaStreamSynchronize";
    case ApiClass::kDeviceSync: return "cudaDeviceSynchronize";
    case ApiClass::kEventSync: return "cudaEventSynchronize";
    case ApiClass::kStreamWaitEvent: return "cudaStreamWaitEvent";
    case ApiClass::kQuery: return "cudaStreamQuery";
    case ApiClass::kEventRecord: return "cudaEventRecord";
    default: return "cudaGetDevice";
  }
}
}  // namespace

SyntheticTrace::SyntheticTrace() {
  info_.path = "synthetic";
  info_.host = "test";
  info_.pid = 1;
  launch_fn_ = Function("cudaLaunchKernel", ApiClass::kLaunch);
  memcpy_fn_ = Function("cudaMemcpy", ApiClass::kMemcpy);
  memcpy_async_fn_ = Function("cudaMemcpyAsync", ApiClass::kMemcpy);
}

uint32_t SyntheticTrace::Name(const std::string& s) {
  if (s.empty()) return 0;
  auto [it, inserted] = strings_.try_emplace(s, next_string_);
  if (inserted) tables_.SetString(next_string_++, s);
  return it->second;
}

uint32_t SyntheticTrace::Function(const std::string& name, ApiClass) {
  auto [it, inserted] = functions_.try_emplace(name, next_function_);
  if (inserted) tables_.SetFunction(next_function_++, name);
  return it->second;
}

uint32_t SyntheticTrace::Stack(const std::vector<std::string>& fns) {
  auto [it, inserted] = stacks_.try_emplace(fns, next_stack_);
  if (!inserted) return it->second;
  std::vector<uint32_t> frames;
  for (const std::string& spec : fns) {
    std::string fn = spec, file;
    uint32_t line = 0;
    size_t at = spec.find('@');
    if (at != std::string::npos) {
      fn = spec.substr(0, at);
      file = spec.substr(at + 1);
      size_t colon = file.rfind(':');
      if (colon != std::string::npos) {
        line = static_cast<uint32_t>(std::atoi(file.c_str() + colon + 1));
        file.resize(colon);
      }
    }
    uint32_t id = next_frame_++;
    tables_.SetFrame(id, Name(fn), Name(file), line, 0);
    frames.push_back(id);
  }
  tables_.SetStack(next_stack_, frames);
  return next_stack_++;
}

ApiCall& SyntheticTrace::Call(uint64_t thread, ApiClass api_class, TimeNs enter, TimeNs exit, uint32_t stack) {
  ApiCall c;
  c.thread = thread;
  c.api_class = api_class;
  c.enter_ns = enter;
  c.exit_ns = exit;
  c.stack = stack;
  c.function = Function(DefaultName(api_class), api_class);
  c.correlation = next_correlation_++;
  calls_.push_back(c);
  return calls_.back();
}

ApiCall& SyntheticTrace::Launch(uint64_t thread, TimeNs enter, TimeNs exit, TimeNs start, TimeNs end,
                                uint32_t stack, uint32_t device, uint32_t stream) {
  ApiCall& c = Call(thread, ApiClass::kLaunch, enter, exit, stack);
  c.function = launch_fn_;
  c.async = true;
  c.device = device;
  GpuActivity a;
  a.start_ns = start;
  a.end_ns = end;
  a.kind = ActivityKind::kKernel;
  a.correlation = c.correlation;
  a.device = device;
  a.stream = stream;
  activities_.push_back(a);
  return c;
}

ApiCall& SyntheticTrace::Copy(uint64_t thread, TimeNs enter, TimeNs exit, TimeNs start, TimeNs end,
                              CopyDirection dir, MemKind host_kind, uint64_t bytes, bool async,
                              uint32_t stack, uint32_t device) {
  ApiCall& c = Call(thread, ApiClass::kMemcpy, enter, exit, stack);
  c.function = async ? memcpy_async_fn_ : memcpy_fn_;
  c.async = async;
  c.direction = dir;
  c.bytes = bytes;
  c.device = device;
  (dir == CopyDirection::kHostToDevice ? c.src_kind : c.dst_kind) = host_kind;
  (dir == CopyDirection::kHostToDevice ? c.dst_kind : c.src_kind) = MemKind::kDevice;
  GpuActivity a;
  a.start_ns = start;
  a.end_ns = end;
  a.kind = ActivityKind::kMemcpy;
  a.correlation = c.correlation;
  a.device = device;
  a.stream = 7;
  a.direction = dir;
  a.bytes = bytes;
  a.src_kind = c.src_kind;
  a.dst_kind = c.dst_kind;
  activities_.push_back(a);
  return c;
}

GpuActivity& SyntheticTrace::Kernel(TimeNs start, TimeNs end, uint32_t device, uint32_t stream) {
  GpuActivity a;
  a.start_ns = start;
  a.end_ns = end;
  a.kind = ActivityKind::kKernel;
  a.device = device;
  a.stream = stream;
  activities_.push_back(a);
  return activities_.back();
}

uint32_t SyntheticTrace::Config(uint32_t blocks, uint32_t threads) {
  LaunchConfig c;
  c.grid[0] = blocks, c.grid[1] = 1, c.grid[2] = 1;
  c.block[0] = threads, c.block[1] = 1, c.block[2] = 1;
  tables_.SetLaunchConfig(next_config_, c);
  return next_config_++;
}

void SyntheticTrace::AddDevice(uint32_t index, uint32_t sms) {
  DeviceDescription d;
  d.index = index;
  d.sm_count = sms;
  info_.devices.push_back(d);
}

void SyntheticTrace::AddSample(uint64_t thread, TimeNs t, uint32_t stack, uint8_t state) {
  samples_.push_back(Sample{t, thread, stack, state});
}

void SyntheticTrace::AddWait(uint64_t thread, TimeNs start, TimeNs end, uint32_t stack, uint8_t state) {
  HostWait w;
  w.start_ns = start;
  w.end_ns = end;
  w.thread = thread;
  w.stack = stack;
  w.state = state;
  waits_.push_back(w);
}

TraceResult SyntheticTrace::Run(const AnalysisOptions& options) const {
  TraceAnalyzer analyzer(options, tables_);
  analyzer.SetDevices(info_.devices);
  for (const ApiCall& c : calls_) analyzer.OnApiCall(c);
  for (const Sample& s : samples_) analyzer.OnSample(s);
  for (const HostWait& w : waits_) analyzer.OnHostWait(w);
  for (const GpuActivity& a : activities_) analyzer.OnActivity(a);
  return analyzer.Finish(info_);
}

Analysis SyntheticTrace::Analyze(const AnalysisOptions& options) const {
  AnalysisBuilder builder(options);
  builder.AddTrace(Run(options));
  return builder.Build();
}

NvtxRange MakeNvtxRange(uint64_t thread, uint32_t name, TimeNs start, TimeNs end, uint32_t depth,
                        uint32_t domain) {
  NvtxRange r;
  r.thread = thread;
  r.name = name;
  r.domain = domain;
  r.start_ns = start;
  r.end_ns = end;
  r.depth = depth;
  return r;
}

}  // namespace gs::analyzer::testing
