// Real PyTorch profiler traces (testdata/README.md) through the importer and the analysis. The
// expected numbers are computed here from the JSON itself, with RapidJSON's DOM (not the
// importer's SAX path): counts per category, the union of each device's work and the gaps in it.
#include "analyzer/import/kineto/kineto_trace.h"

#include <fcntl.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/analysis/trace_analyzer.h"
#include "analyzer/result/analysis_builder.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"

namespace gs::analyzer::kineto {
namespace {

const std::string kData = GS_KINETO_TESTDATA;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, n);
  gzclose(f);
  return out;
}

// The trace's own sums, from a DOM of the whole JSON.
struct JsonSums {
  uint64_t kernels = 0, memcpys = 0, memsets = 0, runtime = 0;
  std::map<uint32_t, double> busy_us;  // per device: union of kernels, copies, memsets
  std::map<uint32_t, double> gaps_us;  // per device: the gaps between that union's pieces
  std::map<uint32_t, uint64_t> gaps;
  std::set<std::string> cats;
};

JsonSums SumsOf(const std::string& json) {
  rapidjson::Document d;
  d.Parse(json.c_str());
  JsonSums s;
  std::map<uint32_t, std::vector<std::pair<double, double>>> work;
  for (const auto& e : d["traceEvents"].GetArray()) {
    if (!e.HasMember("cat") || !e["cat"].IsString() || e["ph"] != "X") continue;
    std::string cat = e["cat"].GetString();
    s.cats.insert(cat);
    bool kernel = cat == "kernel" || cat == "Kernel", copy = cat == "gpu_memcpy" || cat == "Memcpy",
         set = cat == "gpu_memset" || cat == "Memset";
    if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "Runtime") ++s.runtime;
    if (!kernel && !copy && !set) continue;
    s.kernels += kernel, s.memcpys += copy, s.memsets += set;
    const double ts = e["ts"].GetDouble(), dur = e["dur"].GetDouble();
    work[e["args"]["device"].GetUint()].push_back({ts, ts + dur});
  }
  for (auto& [device, v] : work) {
    std::sort(v.begin(), v.end());
    double busy = 0, a = v[0].first, b = v[0].second;
    s.gaps_us[device] = 0, s.gaps[device] = 0;
    for (const auto& [s0, e0] : v) {
      if (s0 > b) {
        busy += b - a;
        s.gaps_us[device] += s0 - b;
        ++s.gaps[device];
        a = s0, b = e0;
      } else {
        b = std::max(b, e0);
      }
    }
    s.busy_us[device] = busy + (b - a);
  }
  return s;
}

struct Analysed {
  std::unique_ptr<KinetoTrace> trace;
  TraceResult result;
};

// The analysis of an opened trace, its devices' SM limits given as analyze_traces.cc gives them.
TraceResult AnalyseTrace(KinetoTrace& trace) {
  static const AnalysisOptions options;
  TraceAnalyzer analyzer(options, trace.tables());
  analyzer.SetDevices(trace.info().devices);
  EXPECT_TRUE(trace.ReadAll(&analyzer).ok());
  return analyzer.Finish(trace.info());
}

Analysed Analyse(const std::string& path) {
  absl::StatusOr<std::unique_ptr<KinetoTrace>> t = KinetoTrace::Open(path);
  EXPECT_TRUE(t.ok()) << t.status();
  Analysed out;
  if (!t.ok()) return out;
  out.trace = std::move(*t);
  out.result = AnalyseTrace(*out.trace);
  return out;
}

class RealTrace : public ::testing::TestWithParam<const char*> {};

TEST_P(RealTrace, KernelsCopiesAndBusyTimeEqualTheJsonsOwnSums) {
  const std::string path = kData + "/" + GetParam();
  const JsonSums want = SumsOf(Gunzip(path));
  Analysed got = Analyse(path);
  ASSERT_NE(got.trace, nullptr);
  EXPECT_EQ(got.trace->counts().kernels, want.kernels);
  EXPECT_EQ(got.trace->counts().memcpys, want.memcpys);
  EXPECT_EQ(got.trace->counts().memsets, want.memsets);
  EXPECT_EQ(got.trace->counts().runtime_calls, want.runtime);
  uint64_t kernels = 0, copies = 0, memsets = 0;
  ASSERT_EQ(got.result.devices.size(), want.busy_us.size());
  for (const DeviceSummary& d : got.result.devices) {
    kernels += d.kernels, copies += d.copies, memsets += d.memsets;
    ASSERT_TRUE(want.busy_us.count(d.device)) << d.device;
    // 1 ns per device op: the DOM reads microseconds as doubles, the importer exactly.
    const double want_ns = want.busy_us.at(d.device) * 1000.0;
    EXPECT_NEAR(static_cast<double>(d.busy_ns), want_ns, 1.0 + (want.kernels + want.memcpys + want.memsets))
        << "device " << d.device;
    // Steady-state idle against the JSON's own gaps between that union's pieces, added up one by
    // one here (the analysis takes its steady window less its busy time), and as many gaps.
    EXPECT_NEAR(static_cast<double>(d.steady_idle_ns), want.gaps_us.at(d.device) * 1000.0,
                1.0 + (want.kernels + want.memcpys + want.memsets))
        << "device " << d.device;
    EXPECT_EQ(d.idle_intervals, want.gaps.at(d.device)) << "device " << d.device;
    // How full: never more than the time a kernel ran (fill_timeline.h caps the sum at 1); ROCm's
    // trace gives grids but no SM count, so no fill there.
    if (d.has_fill) {
      EXPECT_GT(d.sm_coverage_busy_ns, 0) << "device " << d.device;
      EXPECT_LE(d.sm_coverage_busy_ns, d.compute_busy_ns + static_cast<TimeNs>(d.kernels)) << "device " << d.device;
      EXPECT_LE(d.est_occupancy_busy_ns, d.compute_busy_ns + static_cast<TimeNs>(d.kernels)) << "device " << d.device;
    }
  }
  EXPECT_EQ(kernels, want.kernels);
  EXPECT_EQ(copies, want.memcpys);
  EXPECT_EQ(memsets, want.memsets);
}

INSTANTIATE_TEST_SUITE_P(Traces, RealTrace,
                         ::testing::Values("a100_alexnet.pt.trace.json.gz", "multirank/rank-0.json.gz",
                                           "multirank/rank-1.json.gz", "mi250_rocm6.2.json.gz",
                                           "a100_triton.json.gz", "v100_resnet50_workers0.pt.trace.json.gz",
                                           "v100_resnet50_workers4.pt.trace.json.gz"),
                         [](const auto& info) {
                           std::string n = info.param;
                           n = n.substr(0, n.find('.'));
                           for (char& c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

class Collect : public RecordSink {
 public:
  void OnApiCall(const ApiCall& c) override { calls.push_back(c); }
  void OnActivity(const GpuActivity& a) override { activities.push_back(a); }
  void OnSample(const Sample& s) override { samples.push_back(s); }
  void OnMemoryEvent(const MemoryEvent&) override {}
  std::vector<ApiCall> calls;
  std::vector<GpuActivity> activities;
  std::vector<Sample> samples;
};

TEST(KinetoTraceTest, DialectsAndMetadata) {
  auto a100 = KinetoTrace::Open(kData + "/a100_alexnet.pt.trace.json.gz");
  ASSERT_TRUE(a100.ok()) << a100.status();
  EXPECT_FALSE((*a100)->counts().legacy_dialect);
  ASSERT_EQ((*a100)->info().devices.size(), 8u);  // deviceProperties lists the host's 8 A100s
  EXPECT_EQ((*a100)->info().devices[0].name, "NVIDIA A100-PG509-200");
  EXPECT_EQ((*a100)->info().devices[0].total_memory, 42297524224u);
  EXPECT_EQ((*a100)->info().rank, 0);
  EXPECT_EQ((*a100)->info().pid, 2869224);

  auto rank1 = KinetoTrace::Open(kData + "/multirank/rank-1.json.gz");
  ASSERT_TRUE(rank1.ok());
  EXPECT_EQ((*rank1)->info().rank, 1);
  EXPECT_EQ((*rank1)->info().world_size, 128);  // distributedInfo
  EXPECT_EQ((*rank1)->info().wall_clock, WallClock::kEpoch);  // no baseTimeNanoseconds, epoch µs
  // Relative ts from baseTimeNanoseconds: the wall time of time 0, for aligning ranks.
  auto triton = KinetoTrace::Open(kData + "/a100_triton.json.gz");
  ASSERT_TRUE(triton.ok());
  EXPECT_EQ((*triton)->info().wall_clock, WallClock::kBaseTime);
  EXPECT_EQ((*triton)->info().wall_ns_at_zero, 1727743122000000000);
  EXPECT_FALSE((*triton)->info().world_size.has_value());

  auto v100 = KinetoTrace::Open(kData + "/v100_resnet50_workers0.pt.trace.json.gz");
  ASSERT_TRUE(v100.ok());
  EXPECT_TRUE((*v100)->counts().legacy_dialect);
  EXPECT_EQ((*v100)->counts().steps, 2u);  // trimmed to ProfilerStep#5 and #6
  EXPECT_EQ((*v100)->info().devices[0].name, "Tesla V100-DGXS-32GB");
}

TEST(KinetoTraceTest, RuntimeCallsAreClassedAndJoinedToTheirWork) {
  auto t = KinetoTrace::Open(kData + "/a100_alexnet.pt.trace.json.gz");
  ASSERT_TRUE(t.ok());
  Collect c;
  ASSERT_TRUE((*t)->ReadAll(&c).ok());
  std::map<std::string, int> classes;
  int pageable_h2d = 0;
  for (const ApiCall& call : c.calls) {
    const std::string name = (*t)->tables().FunctionName(call.function);
    if (name == "cudaLaunchKernel") {
      EXPECT_EQ(call.api_class, ApiClass::kLaunch);
    }
    if (name == "cudaStreamSynchronize") {
      EXPECT_EQ(call.api_class, ApiClass::kStreamSync);
    }
    if (name == "cudaMalloc") {
      EXPECT_EQ(call.api_class, ApiClass::kMalloc);
    }
    if (name == "cudaMemcpyAsync") {
      EXPECT_EQ(call.api_class, ApiClass::kMemcpy);
      EXPECT_TRUE(call.async);
      // The trace's 16 copies are all "Memcpy HtoD (Pageable -> Device)".
      EXPECT_EQ(call.direction, CopyDirection::kHostToDevice);
      EXPECT_EQ(call.src_kind, MemKind::kPageable);
      EXPECT_TRUE(IsPageableCopy(call));
      EXPECT_GT(call.bytes, 0u);
      ++pageable_h2d;
    }
  }
  EXPECT_EQ(pageable_h2d, 16);
  // Time order, as promised.
  for (size_t i = 1; i < c.calls.size(); ++i) EXPECT_LE(c.calls[i - 1].enter_ns, c.calls[i].enter_ns);
  for (size_t i = 1; i < c.activities.size(); ++i)
    EXPECT_LE(c.activities[i - 1].start_ns, c.activities[i].start_ns);

  // ROCm: hip* names are the runtime's.
  auto rocm = KinetoTrace::Open(kData + "/mi250_rocm6.2.json.gz");
  ASSERT_TRUE(rocm.ok()) << rocm.status();
  Collect r;
  ASSERT_TRUE((*rocm)->ReadAll(&r).ok());
  int launches = 0;
  for (const ApiCall& call : r.calls) launches += call.api_class == ApiClass::kLaunch;
  EXPECT_EQ(launches, 14);  // 12 hipLaunchKernel + 2 hipExtModuleLaunchKernel
  // Triton: the driver's cuLaunchKernel.
  auto triton = KinetoTrace::Open(kData + "/a100_triton.json.gz");
  ASSERT_TRUE(triton.ok());
  Collect tr;
  ASSERT_TRUE((*triton)->ReadAll(&tr).ok());
  ASSERT_EQ(tr.activities.size(), 1u);
  EXPECT_EQ((*triton)->tables().StringValue(tr.activities[0].name), "triton_poi_fused_add_cos_sin_0");
  bool driver_launch = false;
  for (const ApiCall& call : tr.calls)
    driver_launch |= (*triton)->tables().FunctionName(call.function) == "cuLaunchKernel" &&
                     call.api_class == ApiClass::kLaunch && call.correlation == tr.activities[0].correlation;
  EXPECT_TRUE(driver_launch);
}

// cudaStreamWaitEvent and cudaStreamSynchronize launch nothing: their stream and device are on
// the cuda_sync record with the same correlation id, and the gap classifier's stream-wait
// evidence (rule 1) needs them.
TEST(KinetoTraceTest, SynchronisationsKeepTheirStreamAndDevice) {
  const std::string path = kData + "/a100_alexnet.pt.trace.json.gz";
  // What the JSON says: each sync call's stream and device, from its cuda_sync record.
  rapidjson::Document d;
  d.Parse(Gunzip(path).c_str());
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> sync_of;  // correlation -> (stream, device)
  for (const auto& e : d["traceEvents"].GetArray()) {
    if (e.HasMember("cat") && e["cat"] == "cuda_sync")
      sync_of[e["args"]["correlation"].GetUint64()] = {e["args"]["stream"].GetUint64(),
                                                        e["args"]["device"].GetUint64()};
  }
  auto t = KinetoTrace::Open(path);
  ASSERT_TRUE(t.ok()) << t.status();
  Collect c;
  ASSERT_TRUE((*t)->ReadAll(&c).ok());
  std::map<uint64_t, int> wait_streams, sync_streams;
  for (const ApiCall& call : c.calls) {
    const std::string name = (*t)->tables().FunctionName(call.function);
    if (name != "cudaStreamWaitEvent" && name != "cudaStreamSynchronize") continue;
    if (!sync_of.count(call.correlation)) continue;  // 14 later waits have no record: unknown
    EXPECT_EQ(call.stream, sync_of[call.correlation].first) << name;
    EXPECT_EQ(call.device, sync_of[call.correlation].second) << name;
    EXPECT_EQ(call.bytes, 0u);
    ++(name == "cudaStreamWaitEvent" ? wait_streams : sync_streams)[call.stream];
  }
  EXPECT_EQ(wait_streams, (std::map<uint64_t, int>{{7, 16}, {20, 4}}));
  EXPECT_EQ(sync_streams, (std::map<uint64_t, int>{{7, 16}}));
  // The classifier sees the waits: work queued before the device went idle on stream 7, after a
  // cudaStreamWaitEvent on it.
  Analysed a = Analyse(path);
  EXPECT_GT(a.result.intervals.with_stream_wait, 0u);
}

// The stack of a call is the nesting of ops open on its thread when it started, leaf first, with
// ProfilerStep#N at the root.
TEST(KinetoTraceTest, CallStacksAreTheOpNesting) {
  auto t = KinetoTrace::Open(kData + "/v100_resnet50_workers0.pt.trace.json.gz");
  ASSERT_TRUE(t.ok());
  Collect c;
  ASSERT_TRUE((*t)->ReadAll(&c).ok());
  int with_step_root = 0, launches = 0;
  for (const ApiCall& call : c.calls) {
    if (call.api_class != ApiClass::kLaunch) continue;
    ++launches;
    std::vector<FrameInfo> frames = (*t)->tables().ResolveStack(call.stack);
    if (!frames.empty() && frames.back().function.rfind("ProfilerStep#", 0) == 0) ++with_step_root;
  }
  ASSERT_GT(launches, 1000);
  // Forward ops run under ProfilerStep#N on the main thread; backward ones on autograd's thread.
  EXPECT_GT(with_step_root, launches / 4);
  EXPECT_GT(c.samples.size(), 0u);
}

// Host time while the device waits is charged to what the thread was doing: with the DataLoader
// in the main process, its __next__; with worker processes, not.
double DataLoaderShareOfHostWork(const std::string& file) {
  Analysed a = Analyse(kData + "/" + file);
  TimeNs host = 0, loader = 0;
  for (const TraceResult::ChargedStack& s : a.result.stacks) {
    TimeNs ns = s.by_cause[static_cast<int>(Cause::kHostWork)];
    host += ns;
    for (const FrameInfo& f : s.frames) {
      if (f.function.find("DataLoader") != std::string::npos) {
        loader += ns;
        break;
      }
    }
  }
  EXPECT_GT(host, 0) << file;
  return host > 0 ? static_cast<double>(loader) / host : 0;
}

TEST(KinetoTraceTest, DataLoaderInTheMainProcessOwnsTheHostWork) {
  EXPECT_GT(DataLoaderShareOfHostWork("v100_resnet50_workers0.pt.trace.json.gz"), 0.5);
  EXPECT_LT(DataLoaderShareOfHostWork("v100_resnet50_workers4.pt.trace.json.gz"), 0.2);
}

// with_stack=True: python_function events are frames of the same nesting, with file and line.
TEST(KinetoTraceTest, PythonFunctionsKeepFileAndLine) {
  auto t = KinetoTrace::FromBuffer(R"({"traceEvents": [
    {"ph": "X", "cat": "python_function", "name": "train.py(20): train_step", "pid": 1, "tid": 10, "ts": 0, "dur": 1000},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 10, "ts": 100.5, "dur": 50},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 10, "ts": 110.25, "dur": 5,
     "args": {"correlation": 5}},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 120, "dur": 30,
     "args": {"correlation": 5, "device": 0, "stream": 7}}]})",
                                   "stack.json");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE((*t)->info().python_stacks);
  Collect c;
  ASSERT_TRUE((*t)->ReadAll(&c).ok());
  ASSERT_EQ(c.calls.size(), 1u);
  EXPECT_EQ(c.calls[0].enter_ns, 110250);  // microseconds with fractions, exactly
  EXPECT_EQ(c.calls[0].stream, 7u);
  std::vector<FrameInfo> frames = (*t)->tables().ResolveStack(c.calls[0].stack);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].function, "aten::mm");
  EXPECT_EQ(frames[1].function, "train_step");
  EXPECT_EQ(frames[1].file, "train.py");
  EXPECT_EQ(frames[1].line, 20u);
  // Samples: none before the first frame, train_step from 0, aten::mm from 100.5 µs.
  ASSERT_GE(c.samples.size(), 4u);
  EXPECT_EQ(c.samples[0].stack, 0u);
  EXPECT_EQ(c.samples[1].time_ns, 0);
  EXPECT_EQ((*t)->tables().ResolveStack(c.samples[1].stack).size(), 1u);
}

// ---- bad input ----

TEST(KinetoTraceTest, JsonThatIsNotATraceIsAnError) {
  auto t = KinetoTrace::FromBuffer("{\"a\": 1}", "x.json");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("x.json: not a PyTorch profiler trace"), std::string::npos) << t.status();
  t = KinetoTrace::FromBuffer("{\"traceEvents\": [1, 2, 3]", "y.json");
  ASSERT_FALSE(t.ok());
  t = KinetoTrace::FromBuffer("[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2}]",
                              "cpu.json");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("without GPU events"), std::string::npos) << t.status();
}

TEST(KinetoTraceTest, TimestampsInNanosecondsAreAnError) {
  // Epoch nanoseconds where microseconds belong.
  auto t = KinetoTrace::FromBuffer(
      "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
      "\"ts\":1695835572943613000,\"dur\":12000,\"args\":{\"device\":0,\"stream\":7}}]}",
      "ns.json");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("not microseconds"), std::string::npos) << t.status();
}

// A launch and its kernel, as Kineto writes them, at `ts` microseconds (a JSON number's text).
std::string LaunchAndKernel(const std::string& ts, const std::string& correlation, int stream) {
  return absl::StrCat(
      R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": )", ts,
      R"(, "dur": 2, "args": {"correlation": )", correlation, R"(}},
       {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": )", ts, R"(, "dur": 5,
        "args": {"correlation": )", correlation, R"(, "device": 0, "stream": )", stream, "}}");
}

std::string TraceOf(const std::vector<std::string>& events, const std::string& root = "") {
  return absl::StrCat(R"({"schemaVersion": 1, )", root, R"("traceEvents": [)", absl::StrJoin(events, ",\n"), "]}");
}

// Planted launch shapes on an H100-like device (132 SMs, cc 9.0, 2048 threads, 64 K registers and
// 228 KiB of shared memory an SM, 1 KiB reserved a block), each launched from its own op, one after
// the other: their coverage, waves and limiter as worked out here, the device's fill as their sum,
// and the 1-block kernel's launch site first among the under-filled.
TEST(KinetoTraceTest, LaunchConfigurationsSayHowFullTheKernelsKeptTheDevice) {
  const std::string device = R"("deviceProperties": [{"id": 0, "name": "H100-like", "computeMajor": 9,
      "computeMinor": 0, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
      "regsPerBlock": 65536, "regsPerMultiprocessor": 65536, "warpSize": 32, "sharedMemPerBlock": 49152,
      "sharedMemPerBlockOptin": 232448, "sharedMemPerMultiprocessor": 233472, "numSms": 132}], )";
  // One op enclosing a launch, then its kernel: `us` long, at `ts`.
  auto planted = [](const std::string& op, int ts, int us, int correlation, const std::string& grid, int block,
                    int registers) {
    return absl::StrCat(
        R"({"ph": "X", "cat": "cpu_op", "name": ")", op, R"(", "pid": 1, "tid": 1, "ts": )", ts, R"(, "dur": 10},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": )", ts + 1,
        R"(, "dur": 5, "args": {"correlation": )", correlation, R"(}},
        {"ph": "X", "cat": "kernel", "name": ")", op, R"(_kernel", "pid": 0, "tid": 7, "ts": )", ts + 20,
        R"(, "dur": )", us, R"(, "args": {"correlation": )", correlation, R"(, "device": 0, "stream": 7,
         "registers per thread": )", registers, R"(, "shared memory": 0, "grid": )", grid,
        R"(, "block": [)", block, R"(, 1, 1]}})");
  };
  auto t = KinetoTrace::FromBuffer(
      TraceOf({planted("one_block", 1000, 1000, 1, "[1, 1, 1]", 128, 32),
                // 8 blocks of 256 threads an SM (warps and registers both allow 8): 132 × 8 + 1.
                planted("one_extra_block", 3000, 1000, 2, "[1057, 1, 1]", 256, 32),
                planted("full_wave", 5000, 100, 3, "[33, 32, 1]", 256, 32),
                // 255 registers: 8192 a warp, 2 warps of each quarter's 16 K, 8 warps: 1 block an SM.
                planted("register_limited", 6000, 1000, 4, "[132, 1, 1]", 256, 255)},
              device),
      "planted.json");
  ASSERT_TRUE(t.ok()) << t.status();
  TraceResult r = AnalyseTrace(**t);
  ASSERT_EQ(r.devices.size(), 1u);
  ASSERT_EQ(r.kernel_configs.size(), 4u);
  std::map<std::string, const KernelConfigStats*> by_name;
  for (const KernelConfigStats& k : r.kernel_configs) by_name[k.name] = &k;
  ASSERT_EQ(by_name.size(), 4u);

  const KernelConfigStats& one = *by_name.at("one_block_kernel");
  EXPECT_DOUBLE_EQ(one.fill.sm_coverage, 1.0 / 132);
  EXPECT_DOUBLE_EQ(one.fill.wave_coverage, 1.0 / 132);
  EXPECT_EQ(one.fill.waves, 1);
  EXPECT_EQ(one.occupancy.active_blocks, 16);  // 4 warps a block: 64 / 4; registers allow 16 too
  EXPECT_EQ(one.underfilled_ns, std::llround(1'000'000.0 * 131 / 132));

  const KernelConfigStats& extra = *by_name.at("one_extra_block_kernel");
  EXPECT_EQ(extra.occupancy.active_blocks, 8);
  EXPECT_EQ(extra.occupancy.limiters, uint32_t{kLimitWarps | kLimitRegisters});
  EXPECT_EQ(extra.fill.waves, 2);
  // One full wave, then 1 block on 1 SM: (1 + 1/132) / 2 of the SMs over the two waves.
  EXPECT_DOUBLE_EQ(extra.fill.wave_coverage, (1 + 1.0 / 132) / 2);
  EXPECT_DOUBLE_EQ(extra.fill.sm_coverage, 1.0);

  const KernelConfigStats& full = *by_name.at("full_wave_kernel");
  EXPECT_EQ(full.fill.waves, 1);
  EXPECT_DOUBLE_EQ(full.fill.wave_coverage, 1.0);
  EXPECT_EQ(full.underfilled_ns, 0);

  const KernelConfigStats& regs = *by_name.at("register_limited_kernel");
  EXPECT_EQ(regs.occupancy.active_blocks, 1);
  EXPECT_EQ(regs.occupancy.limiters, uint32_t{kLimitRegisters});
  EXPECT_DOUBLE_EQ(regs.occupancy.theoretical_occupancy, 8.0 / 64);
  EXPECT_EQ(regs.fill.waves, 1);
  EXPECT_DOUBLE_EQ(regs.fill.wave_coverage, 1.0);

  // The device: the kernels never overlap, so the fill is Σ duration × coverage.
  const DeviceSummary& d = r.devices[0];
  ASSERT_TRUE(d.has_fill);
  EXPECT_TRUE(d.has_occupancy);
  EXPECT_EQ(d.fill_kernels, 4u);
  const double want = 1'000'000.0 / 132 + 1'000'000.0 * (1 + 1.0 / 132) / 2 + 100'000.0 + 1'000'000.0;
  EXPECT_NEAR(static_cast<double>(d.sm_coverage_busy_ns), want, 1.0);
  EXPECT_DOUBLE_EQ(d.sm_coverage_utilization, static_cast<double>(d.sm_coverage_busy_ns) / static_cast<double>(d.wall_ns));
  EXPECT_LT(d.est_occupancy_busy_ns, d.sm_coverage_busy_ns);

  // The 1-block kernel's site ranks first, launched from its op.
  static const AnalysisOptions options;  // the builder keeps a reference
  AnalysisBuilder builder(options);
  builder.AddTrace(std::move(r));
  Analysis a = builder.Build();
  ASSERT_FALSE(a.kernel_configs.empty());
  EXPECT_EQ(a.kernel_configs[0].name, "one_block_kernel");
  ASSERT_FALSE(a.kernel_configs[0].stacks.empty());
  ASSERT_FALSE(a.kernel_configs[0].stacks[0].frames.empty());
  EXPECT_EQ(a.kernel_configs[0].stacks[0].frames[0].function, "one_block");
  EXPECT_EQ(a.kernel_configs[1].name, "one_extra_block_kernel");

  // Each shape's advice, with its numbers: the device is never idle between these kernels long
  // enough to matter, yet three of the four leave most of it empty.
  std::map<std::string, std::string> advice;
  for (const Recommendation& rec : a.recommendations) advice[rec.kind] = rec.text;
  ASSERT_TRUE(advice.count("small_grid")) << a.recommendations.size();
  EXPECT_NE(advice["small_grid"].find("1 launch of `one_block_kernel` (grid 1x1x1 = 1 blocks of 128 threads on 132 SMs: 0.8%"),
            std::string::npos) << advice["small_grid"];
  EXPECT_NE(advice["small_grid"].find("launched from `one_block`"), std::string::npos) << advice["small_grid"];
  ASSERT_TRUE(advice.count("partial_wave"));
  EXPECT_NE(advice["partial_wave"].find("as 1 full wave of 1056 (132 SMs × 8 blocks) and a last one of 1 blocks"),
            std::string::npos) << advice["partial_wave"];
  EXPECT_NE(advice["partial_wave"].find("A grid of 1056 or 2112 blocks"), std::string::npos) << advice["partial_wave"];
  ASSERT_TRUE(advice.count("resource_limited"));
  EXPECT_NE(advice["resource_limited"].find("`register_limited_kernel`"), std::string::npos);
  EXPECT_NE(advice["resource_limited"].find("fits 1 block of 256 threads an SM (theoretical occupancy 12.5%), held "
                                            "there by its 255 registers per thread"),
            std::string::npos) << advice["resource_limited"];
}

// Launch configurations and device limits no GPU has (a damaged or hand-made trace): no crash, no
// infinite or NaN figure; what cannot be sized is left out of the fill, said as null.
TEST(KinetoTraceTest, ImpossibleLaunchConfigurationsAreLeftOutNotDividedBy) {
  const std::string device = R"("deviceProperties": [{"id": 0, "name": "odd", "computeMajor": 9,
      "computeMinor": 0, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 16,
      "regsPerBlock": 65536, "regsPerMultiprocessor": -1, "warpSize": 0, "sharedMemPerBlock": 49152,
      "sharedMemPerBlockOptin": 1e300, "sharedMemPerMultiprocessor": 233472, "numSms": 4294967295}], )";
  auto kernel = [](int ts, const std::string& grid, const std::string& block, const std::string& regs,
                   const std::string& smem) {
    return absl::StrCat(R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": )", ts,
                        R"(, "dur": 10, "args": {"device": 0, "stream": 7, "grid": )", grid, R"(, "block": )", block,
                        R"(, "registers per thread": )", regs, R"(, "shared memory": )", smem, "}}");
  };
  auto t = KinetoTrace::FromBuffer(
      TraceOf({kernel(100, "[0, 1, 1]", "[32, 1, 1]", "32", "0"),
               kernel(200, "[4294967295, 65535, 65535]", "[32, 1, 1]", "32", "0"),
               kernel(300, "[1, 1, 1]", "[100000, 1, 1]", "32", "0"),
               kernel(400, "[2, 1, 1]", "[32, 1, 1]", "1000000000", "-5"),
               kernel(500, "[[1], 2, 3, 4, 5]", "[\"x\", 1]", "\"many\"", "1e99"),
               kernel(600, "[8, 1, 1]", "[64, 1, 1]", "32", "0")},
              device),
      "odd.json");
  ASSERT_TRUE(t.ok()) << t.status();
  TraceResult r = AnalyseTrace(**t);
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].kernels, 6u);
  for (const KernelConfigStats& k : r.kernel_configs) {
    EXPECT_FALSE(k.occupancy_known) << k.config.grid[0];  // a warp size of 0 sizes nothing
    for (double v : {k.fill.blocks_per_sm, k.fill.sm_coverage, k.fill.wave_coverage, k.fill.est_occupancy})
      EXPECT_TRUE(std::isfinite(v) && v >= 0 && v <= 4294967295.0) << v;
    EXPECT_LE(k.fill.sm_coverage, 1.0);
  }
  const DeviceSummary& d = r.devices[0];
  EXPECT_FALSE(d.has_occupancy);
  EXPECT_LE(d.sm_coverage_busy_ns, d.compute_busy_ns);
  EXPECT_TRUE(std::isfinite(d.sm_coverage_utilization));
}

// One event far from the rest (53 years later: a damaged file, or ns among µs) is dropped and
// counted, as a .gstrace drops such a record; the rest is analysed.
TEST(KinetoTraceTest, AStrayEventIsDroppedAndCounted) {
  auto t = KinetoTrace::FromBuffer(TraceOf({LaunchAndKernel("1000", "1", 7), LaunchAndKernel("2000", "2", 7),
                                            LaunchAndKernel("3000", "3", 7),
                                            R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7,
                                                "ts": 1695835572943613, "dur": 1, "args": {"device": 0}})"}),
                                   "stray.json");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)->counts().dropped, 1u);
  EXPECT_EQ((*t)->info().losses.other_dropped, 1u);
  EXPECT_NE((*t)->DamageWarning().find("stray.json: 1 event dropped"), std::string::npos) << (*t)->DamageWarning();
  static const AnalysisOptions options;
  TraceAnalyzer analyzer(options, (*t)->tables());
  ASSERT_TRUE((*t)->ReadAll(&analyzer).ok());
  TraceResult r = analyzer.Finish((*t)->info());
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].kernels, 3u);
  EXPECT_EQ(r.devices[0].wall_ns, 2'005'000);  // 1000 µs to 3005 µs: the stray kernel is not in it
}

// Timestamps at the edges of int64 nanoseconds (and a baseTimeNanoseconds at INT64_MAX) neither
// overflow nor reject the trace: beyond ±146 years they are not microseconds and are dropped.
TEST(KinetoTraceTest, TimestampsAtTheEdgesOfInt64AreDroppedWithoutOverflow) {
  auto t = KinetoTrace::FromBuffer(
      TraceOf({LaunchAndKernel("1000", "1", 7), LaunchAndKernel("2000", "2", 7),
               LaunchAndKernel("9223372036854774.807", "3", 7),   // INT64_MAX ns, less 1 µs
               LaunchAndKernel("-9223372036854774.807", "4", 7),  // its negative
               LaunchAndKernel("4611686018427386.9", "5", 7),     // within ±2^62 ns: kept, then far
               R"({"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 900,
                   "dur": 9223372036854774})"},                   // lasts 292 years
              R"("baseTimeNanoseconds": 9223372036854775807, )"),
      "edges.json");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)->counts().bad_times, 4u);  // two launches, two kernels
  EXPECT_EQ((*t)->counts().dropped, 3u);    // the 292-year op; the far launch and kernel
  EXPECT_NE((*t)->DamageWarning().find("edges.json: 7 events dropped"), std::string::npos) << (*t)->DamageWarning();
  Collect c;
  ASSERT_TRUE((*t)->ReadAll(&c).ok());
  ASSERT_EQ(c.activities.size(), 2u);
  EXPECT_EQ(c.activities[1].end_ns, 2'005'000);
  ASSERT_EQ(c.calls.size(), 2u);
}

// Correlation ids are 64 bits in Kineto: ids that differ only above bit 31 are different calls.
TEST(KinetoTraceTest, CorrelationIdsKeepAll64Bits) {
  auto t = KinetoTrace::FromBuffer(TraceOf({LaunchAndKernel("1000", "1", 3),
                                            LaunchAndKernel("2000", "4294967297", 5),  // 2^32 + 1
                                            LaunchAndKernel("3000", "9223372036854775807", 9)}),
                                   "wide.json");
  ASSERT_TRUE(t.ok()) << t.status();
  Collect c;
  ASSERT_TRUE((*t)->ReadAll(&c).ok());
  ASSERT_EQ(c.calls.size(), 3u);
  ASSERT_EQ(c.activities.size(), 3u);
  std::set<uint32_t> ids;
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(c.calls[i].correlation, c.activities[i].correlation) << i;
    ids.insert(c.calls[i].correlation);
  }
  EXPECT_EQ(ids.size(), 3u);
  EXPECT_EQ(c.calls[0].stream, 3u);
  EXPECT_EQ(c.calls[1].stream, 5u);  // its own kernel's, not id 1's
  EXPECT_EQ(c.calls[2].stream, 9u);
}

TEST(KinetoTraceTest, CutJsonIsAnalysedAsFarAsItWasRead) {
  const std::string json = Gunzip(kData + "/a100_alexnet.pt.trace.json.gz");
  const JsonSums all = SumsOf(json);
  auto t = KinetoTrace::FromBuffer(json.substr(0, json.size() * 3 / 4), "cut.json");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_NE((*t)->DamageWarning().find("cut.json: the JSON ends early"), std::string::npos) << (*t)->DamageWarning();
  EXPECT_LE((*t)->counts().kernels, all.kernels);
  EXPECT_GT((*t)->counts().kernels + (*t)->counts().memcpys, 0u);
}

TEST(KinetoTraceTest, CutGzipIsAnalysedAsFarAsItWasRead) {
  const std::string gz = ReadFile(kData + "/multirank/rank-0.json.gz");
  const std::string path = ::testing::TempDir() + "/cut.json.gz";
  std::ofstream(path, std::ios::binary) << gz.substr(0, gz.size() / 2);
  ASSERT_TRUE(LooksLikeJson(path));
  auto t = KinetoTrace::Open(path);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_NE((*t)->DamageWarning().find("ends early"), std::string::npos) << (*t)->DamageWarning();
  EXPECT_GT((*t)->counts().kernels, 0u);
  // The same bytes in memory.
  auto m = KinetoTrace::FromBuffer(gz.substr(0, gz.size() / 2), "cut.json.gz");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)->counts().kernels, (*t)->counts().kernels);
}

// Untrusted input: every cut of a real trace, and random byte changes, give an error or a trace
// that analyses — never a crash (what tests/fuzz/kineto_fuzzer.cc does with random inputs,
// deterministic here).
TEST(KinetoTraceTest, EveryCutAndFlipOfARealTraceIsAnErrorOrATrace) {
  const std::string json = Gunzip(kData + "/a100_triton.json.gz");
  auto run = [](const std::string& bytes) {
    auto t = KinetoTrace::FromBuffer(bytes, "f.json");
    if (!t.ok()) return;
    static const AnalysisOptions options;
    TraceAnalyzer analyzer(options, (*t)->tables());
    EXPECT_TRUE((*t)->ReadAll(&analyzer).ok());
    analyzer.Finish((*t)->info());
  };
  for (size_t cut = 0; cut < json.size(); cut += 13) run(json.substr(0, cut));
  std::mt19937 rng(15);
  const char alphabet[] = "{}[]\":,0123456789.-eE \\tnul";
  for (int i = 0; i < 1500; ++i) {
    std::string m = json;
    for (int k = 0; k < 4; ++k) m[rng() % m.size()] = alphabet[rng() % (sizeof alphabet - 1)];
    run(m);
  }
  // Deep nesting is parsed iteratively (no recursion to overflow).
  run("{\"traceEvents\": [" + std::string(200000, '[') + std::string(200000, ']') + "]}");
}

// The parse is most of a large trace's time: it reports the file's bytes read as it goes (for the
// terminal's progress line), not only once it is over.
TEST(KinetoTraceTest, TheParseReportsProgressInBytesOfTheFile) {
  const std::string gz = kData + "/v100_resnet50_workers0.pt.trace.json.gz";
  const std::string plain = ::testing::TempDir() + "/workers0.json";
  std::ofstream(plain, std::ios::binary) << Gunzip(gz);  // 9.6 MB: ten 1 MiB buffers
  for (const std::string& path : {plain, gz}) {
    std::vector<uint64_t> seen;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    auto t = KinetoTrace::FromFd(fd, path, [&seen](uint64_t bytes) { seen.push_back(bytes); });
    ASSERT_TRUE(t.ok()) << t.status();
    ASSERT_FALSE(seen.empty()) << path;
    EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end())) << path;
    EXPECT_EQ(seen.back(), (*t)->file_bytes()) << path;  // all of it, compressed bytes for gzip
    if (path == plain) {
      EXPECT_GE(seen.size(), 9u);
      EXPECT_LT(seen.front(), (*t)->file_bytes() / 4);  // from the start, not at the end
    }
  }
}

TEST(KinetoTraceTest, OnlyJsonLooksLikeJson) {
  const std::string path = ::testing::TempDir() + "/not.json";
  std::ofstream(path, std::ios::binary) << "\x89GSTRACE\r\n";
  EXPECT_FALSE(LooksLikeJson(path));
  EXPECT_TRUE(LooksLikeJson(kData + "/a100_triton.json.gz"));
  EXPECT_FALSE(LooksLikeJson(kData + "/no-such-file"));
  // In a folder, only JSON that names traceEvents is taken for a trace (a job's other JSON is not).
  EXPECT_TRUE(LooksLikeKinetoTrace(kData + "/multirank/rank-0.json.gz"));
  const std::string other = ::testing::TempDir() + "/truth.jsonl";
  std::ofstream(other, std::ios::binary) << "{\"step\": 1}\n{\"step\": 2}\n";
  EXPECT_TRUE(LooksLikeJson(other));
  EXPECT_FALSE(LooksLikeKinetoTrace(other));
}

}  // namespace
}  // namespace gs::analyzer::kineto
