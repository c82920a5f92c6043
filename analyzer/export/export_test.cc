// Tests of the exports and the diff: the Chrome trace structurally and against the analysis'
// own numbers, the folded stacks' total, and a before/after diff with a planted problem.
#include <unistd.h>

#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "analyzer/analysis/analyze_traces.h"
#include "analyzer/export/chrome_export.h"
#include "analyzer/export/collapsed_stacks.h"
#include "analyzer/export/kineto_export.h"
#include "analyzer/export/trace_diff.h"
#include "analyzer/json/json_value.h"
#include "analyzer/testing/trace_files.h"
#include "gtest/gtest.h"
#include "proto/testing/trace_builder.h"

namespace gs::analyzer {
namespace {

namespace tr = gpustall::trace;
using gs::trace::ApiCallRecord;
using gs::trace::GpuActivityRecord;
using gs::trace::testing::TraceBuilder;

constexpr uint64_t kUs = 1'000, kMs = 1'000'000;

std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/export_test_", getpid(), "_", name);
}

// A training loop on two streams: per step `host_ms` of CPU work, then (when `pageable_copy_ms`
// > 0, the planted problem) a copy from pageable memory whose call takes that long, then three
// 2 ms kernels (alternating streams 7 and 9), then a stream sync.
std::string WriteLoop(const std::string& path, int steps, uint64_t host_ms, uint64_t pageable_copy_ms) {
  tr::TraceHeader h;
  h.set_host_name("testhost");
  h.set_pid(777);
  h.mutable_capture()->set_mode(tr::CAPTURE_MODE_CUPTI);
  h.mutable_capture()->set_native_stacks(true);
  tr::DeviceInfo* d = h.add_devices();
  d->set_index(0);
  d->set_name("Simulated GPU");
  std::string error;
  auto b = TraceBuilder::Create(path, h, TraceBuilder::Options(), &error);
  if (!b) return error;
  uint32_t memcpy_fn = b->InternApiFunction("cudaMemcpy", tr::API_CLASS_MEMCPY);
  uint32_t launch_fn = b->InternApiFunction("cudaLaunchKernel", tr::API_CLASS_LAUNCH);
  uint32_t sync_fn = b->InternApiFunction("cudaStreamSynchronize", tr::API_CLASS_STREAM_SYNC);
  uint32_t copy_stack = b->InternStackOfFunctions(
      {"cudaMemcpy", "copy_batch@loop.cc:51", "load_batch@loop.cc:42", "train_step@loop.cc:80", "main@loop.cc:99"});
  uint32_t fwd = b->InternStackOfFunctions({"cudaLaunchKernel", "forward@loop.cc:61", "train_step@loop.cc:80", "main@loop.cc:99"});
  uint32_t sync = b->InternStackOfFunctions({"cudaStreamSynchronize", "wait@loop.cc:70", "train_step@loop.cc:80", "main@loop.cc:99"});
  uint32_t gemm = b->InternString("gemm \"fused\" kernel");
  b->AddThread(100, "trainer", true);
  uint32_t corr = 1;
  auto call = [&](uint32_t fn, uint64_t enter, uint64_t exit, uint32_t stack) {
    ApiCallRecord c;
    c.thread_id = 100;
    c.enter_ns = enter;
    c.exit_ns = exit;
    c.function = fn;
    c.stack = stack;
    c.correlation_id = corr++;
    c.stream = 7;
    return c;
  };
  auto activity = [&](const ApiCallRecord& c, tr::ActivityKind kind, uint32_t stream, uint64_t start, uint64_t end) {
    GpuActivityRecord a;
    a.start_ns = start;
    a.end_ns = end;
    a.correlation_id = c.correlation_id;
    a.kind = kind;
    a.source = tr::ACTIVITY_SOURCE_CUPTI;
    a.stream = stream;
    a.name = kind == tr::ACTIVITY_KIND_KERNEL ? gemm : 0;
    a.bytes = c.bytes;
    a.copy_kind = c.copy_kind;
    a.src_kind = c.src_kind;
    a.dst_kind = c.dst_kind;
    b->AddActivity(a);
  };
  uint32_t step_name = b->InternString("train step");
  uint64_t now = 7'000'000'000;
  for (int i = 0; i < steps; ++i) {
    gs::trace::NvtxRangeRecord range;
    range.thread_id = 100;
    range.start_ns = now;
    range.name = step_name;
    now += host_ms * kMs;
    if (pageable_copy_ms > 0) {
      ApiCallRecord c = call(memcpy_fn, now, now + pageable_copy_ms * kMs, copy_stack);
      c.bytes = 64 << 20;
      c.copy_kind = 1;
      c.src_kind = tr::MEM_KIND_PAGEABLE;
      c.dst_kind = tr::MEM_KIND_DEVICE;
      b->AddApiCall(c);
      activity(c, tr::ACTIVITY_KIND_MEMCPY, 7, now + pageable_copy_ms * kMs - 500 * kUs, now + pageable_copy_ms * kMs);
      now += pageable_copy_ms * kMs;
    }
    uint64_t dev = now + 10 * kUs;
    for (int k = 0; k < 3; ++k) {
      ApiCallRecord l = call(launch_fn, now, now + 6 * kUs, fwd);
      l.flags = 1;
      b->AddApiCall(l);
      activity(l, tr::ACTIVITY_KIND_KERNEL, k % 2 ? 9 : 7, dev, dev + 2 * kMs);
      dev += 2 * kMs;
      now += 8 * kUs;
    }
    ApiCallRecord s = call(sync_fn, now, dev + 20 * kUs, sync);
    s.correlation_id = 0;
    b->AddApiCall(s);
    now = dev + 20 * kUs;
    range.end_ns = now;
    b->AddNvtxRange(range);
  }
  return b->Finish() ? "" : "write failed";
}

class ExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = TempPath("loop.gstrace");
    ASSERT_EQ(WriteLoop(path_, 8, 5, 0), "");
  }
  void TearDown() override { std::remove(path_.c_str()); }
  std::string path_;
};

Json ExportAndParse(const std::string& path, ChromeExportStats* stats) {
  std::ostringstream out;
  absl::StatusOr<ChromeExportStats> s = ExportChromeTrace(path, &out);
  EXPECT_TRUE(s.ok()) << s.status();
  if (s.ok()) *stats = *s;
  absl::StatusOr<Json> json = Json::Parse(out.str());
  EXPECT_TRUE(json.ok()) << json.status() << "\n" << out.str().substr(0, 2000);
  return json.ok() ? *json : Json();
}

TEST_F(ExportTest, ChromeTraceIsStructurallyValid) {
  ChromeExportStats stats;
  Json root = ExportAndParse(path_, &stats);
  const Json& events = root["traceEvents"];
  ASSERT_EQ(events.type(), Json::Type::kArray);
  EXPECT_EQ(events.size(), stats.events);
  std::map<int64_t, int> flow_starts, flow_ends;
  std::set<std::string> process_names, thread_names;
  for (const Json& e : events.items()) {
    ASSERT_EQ(e.type(), Json::Type::kObject) << e.Dump(0);
    for (const char* field : {"name", "ph", "ts", "pid", "tid"}) ASSERT_TRUE(e.Has(field)) << field << " in " << e.Dump(0);
    EXPECT_EQ(e["name"].type(), Json::Type::kString);
    EXPECT_EQ(e["ts"].type(), Json::Type::kNumber);
    const std::string& ph = e["ph"].as_string();
    if (ph == "X") {
      ASSERT_TRUE(e.Has("dur")) << e.Dump(0);
      EXPECT_GE(e["dur"].as_double(), 0);
    } else if (ph == "M") {
      ASSERT_TRUE(e["args"].Has("name") || e["args"].Has("sort_index")) << e.Dump(0);
      if (e["name"].as_string() == "process_name") process_names.insert(e["args"]["name"].as_string());
      if (e["name"].as_string() == "thread_name") thread_names.insert(e["args"]["name"].as_string());
    } else if (ph == "s") {
      ++flow_starts[e["id"].as_int()];
    } else if (ph == "f") {
      EXPECT_EQ(e["bp"].as_string(), "e");
      ++flow_ends[e["id"].as_int()];
    } else {
      ADD_FAILURE() << "unexpected phase " << ph;
    }
  }
  EXPECT_EQ(flow_starts.size(), 8u * 3);  // every launch has its kernel
  EXPECT_EQ(flow_starts.size(), stats.flows);
  for (const auto& [id, n] : flow_starts) {
    EXPECT_EQ(n, 1) << id;
    EXPECT_EQ(flow_ends[id], 1) << "flow " << id << " has no single end";
  }
  EXPECT_EQ(flow_ends.size(), flow_starts.size());
  EXPECT_TRUE(process_names.count("GPU 0 (Simulated GPU)"));
  EXPECT_TRUE(process_names.count("pid 777 on testhost"));
  EXPECT_TRUE(thread_names.count("GPU 0 idle"));
  EXPECT_TRUE(thread_names.count("stream 7"));
  EXPECT_TRUE(thread_names.count("stream 9"));
  EXPECT_TRUE(thread_names.count("trainer (100)"));
}

TEST_F(ExportTest, ChromeTraceAgreesWithTheAnalysis) {
  ChromeExportStats stats;
  Json root = ExportAndParse(path_, &stats);
  absl::StatusOr<Analysis> analysis = AnalyzeTraces({path_});
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  ASSERT_EQ(analysis->devices.size(), 1u);
  const DeviceSummary& dev = analysis->devices[0];
  // µs with three decimals: exact nanoseconds after rounding.
  auto ns = [](const Json& v) { return static_cast<int64_t>(v.as_double() * 1000 + 0.5); };
  int64_t kernel_ns = 0, idle_ns = 0;
  uint64_t gpu_work = 0, idle_events = 0, api_calls = 0, with_stack = 0, after_sync = 0, nvtx = 0;
  std::set<std::string> causes;
  for (const Json& e : root["traceEvents"].items()) {
    if (e["ph"].as_string() != "X") continue;
    const std::string& cat = e["cat"].as_string();
    if (e["pid"].as_int() == GpuPid(0) && e["tid"].as_int() != kIdleTid) {
      ++gpu_work;
      if (cat == "kernel") kernel_ns += ns(e["dur"]);
    }
    if (e["pid"].as_int() == GpuPid(0) && e["tid"].as_int() == kIdleTid) {
      ASSERT_EQ(cat, "idle");
      ++idle_events;
      idle_ns += ns(e["dur"]);
      causes.insert(e["name"].as_string());
      EXPECT_FALSE(e["args"]["evidence"].as_string().empty());
      if (e["args"].Has("after_sync")) {
        ++after_sync;
        EXPECT_EQ(e["args"]["after_sync"].as_string(), "cudaStreamSynchronize at wait (loop.cc:70)");
      }
    }
    if (cat == "nvtx") {
      ++nvtx;
      EXPECT_EQ(e["name"].as_string(), "train step");
      EXPECT_EQ(e["tid"].as_int(), 100);
    }
    if (cat == "cuda_api") {
      ++api_calls;
      EXPECT_EQ(e["pid"].as_int(), 777);
      if (e["args"].Has("stack")) {
        ++with_stack;
        ASSERT_EQ(e["args"]["stack"].type(), Json::Type::kArray);
        EXPECT_TRUE(absl::StrContains(e["args"]["stack"].items().back().as_string(), "main"));  // leaf first
      }
    }
  }
  // Kernels do not overlap in this workload, so their summed durations are the compute-busy union.
  EXPECT_EQ(kernel_ns, dev.compute_busy_ns);
  EXPECT_EQ(gpu_work, dev.kernels + dev.copies + dev.memsets);
  EXPECT_EQ(idle_events, dev.idle_intervals);
  EXPECT_EQ(idle_ns, dev.steady_idle_ns);
  EXPECT_EQ(static_cast<int64_t>(stats.idle_ns), analysis->steady_idle_ns);
  EXPECT_EQ(nvtx, 8u);
  EXPECT_EQ(stats.nvtx_ranges, 8u);
  EXPECT_EQ(after_sync, analysis->intervals.after_sync_count);
  EXPECT_GT(after_sync, 0u);
  EXPECT_EQ(api_calls, 8u * 4);
  EXPECT_EQ(with_stack, api_calls);
  EXPECT_TRUE(causes.count("host_work")) << "the 5 ms of CPU work per step";
}

TEST_F(ExportTest, ChromeExportRejectsWhatIsNotATrace) {
  std::string bad = TempPath("not_a_trace.txt");
  ASSERT_EQ(testing::WriteNotATrace(bad), "");
  std::ostringstream out;
  EXPECT_FALSE(ExportChromeTrace(bad, &out).ok());
  EXPECT_TRUE(out.str().empty());
  std::remove(bad.c_str());
}

// The Kineto dialect: what HTA and TensorBoard read (kineto_export.h), checked on the same loop.
TEST_F(ExportTest, KinetoTraceHasKinetosLayout) {
  std::ostringstream out;
  absl::StatusOr<TraceEventExportStats> stats = ExportKinetoTrace(path_, &out);
  ASSERT_TRUE(stats.ok()) << stats.status();
  // HTA finds the rank with the regular expression "rank":\s+(\d+) before parsing.
  EXPECT_TRUE(absl::StrContains(out.str(), "\"distributedInfo\": {\"rank\": 0, \"world_size\": 1")) << out.str().substr(0, 300);
  absl::StatusOr<Json> parsed = Json::Parse(out.str());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const Json& root = *parsed;
  EXPECT_EQ(root["schemaVersion"].as_int(), 1);
  EXPECT_EQ(root["displayTimeUnit"].as_string(), "ms");
  ASSERT_EQ(root["deviceProperties"].size(), 1u);
  EXPECT_EQ(root["deviceProperties"].items()[0]["name"].as_string(), "Simulated GPU");
  EXPECT_TRUE(root.Has("baseTimeNanoseconds"));
  std::map<std::string, int> categories;
  std::map<int64_t, int> starts, ends;
  std::map<int64_t, int64_t> call_pid;  // correlation -> pid of the call
  for (const Json& e : root["traceEvents"].items()) {
    const std::string& ph = e["ph"].as_string();
    if (ph == "s" || ph == "f") {
      EXPECT_EQ(e["cat"].as_string(), "ac2g");
      EXPECT_EQ(e["name"].as_string(), "ac2g");
      ++(ph == "s" ? starts : ends)[e["id"].as_int()];
      EXPECT_EQ(e["pid"].as_int(), ph == "s" ? 777 : 0) << e.Dump(0);
      continue;
    }
    if (ph != "X") continue;
    const std::string& cat = e["cat"].as_string();
    ++categories[cat];
    if (cat == "cuda_runtime") {
      EXPECT_EQ(e["pid"].as_int(), 777);
      EXPECT_FALSE(e["args"].Has("stream")) << "HTA takes any event with a stream for GPU work";
      EXPECT_EQ(e["args"]["External id"].as_int(), e["args"]["correlation"].as_int());
      call_pid[e["args"]["correlation"].as_int()] = e["pid"].as_int();
    } else if (cat == "kernel") {
      EXPECT_EQ(e["pid"].as_int(), e["args"]["device"].as_int());  // pid = device, tid = stream
      EXPECT_EQ(e["tid"].as_int(), e["args"]["stream"].as_int());
      EXPECT_EQ(e["name"].as_string(), "gemm \"fused\" kernel");
      EXPECT_TRUE(e["args"].Has("correlation"));
    } else if (cat == "gpustall_idle") {
      EXPECT_FALSE(e["args"].Has("stream"));
      EXPECT_EQ(e["tid"].as_int(), kIdleTidKineto);
    }
    // Relative to baseTimeNanoseconds: the loop starts 7 s into CLOCK_MONOTONIC, the test trace has
    // no wall clock, so the origin is 0 and ts stays absolute.
    EXPECT_GE(e["ts"].as_double(), 7e6) << e.Dump(0);
  }
  EXPECT_EQ(categories["kernel"], 8 * 3);
  EXPECT_EQ(categories["cuda_runtime"], 8 * 4);
  EXPECT_EQ(categories["user_annotation"], 8);
  EXPECT_EQ(categories["gpustall_idle"], static_cast<int>(stats->idle_intervals));
  EXPECT_EQ(starts.size(), 8u * 3);
  for (const auto& [id, n] : starts) {
    EXPECT_EQ(n, 1);
    EXPECT_EQ(ends[id], 1) << "flow " << id;
    EXPECT_EQ(call_pid.count(id), 1u) << "a flow's id is the call's correlation id";
  }
}

// An idle interval names its resume site, and a call its stack, by the frames as the trace has
// them when the export reads them: a frame the agent wrote raw and symbolised later
// (TraceBuilder::SymbolizeFrame) names the sites of the intervals classified before, and the
// stacks of the calls read before, by its module, and those after by its function. The export
// keeps each stack's site and description while the trace's tables stay as they were; this fails
// if it kept them longer. Each phase holds more steps than the analysis keeps pending
// (trace_analyzer.cc releases its sort window at 4,096 records), so intervals are classified
// during both.
TEST(ExportSitesTest, ResumeSitesFollowAFrameSymbolisedLater) {
  const std::string path = TempPath("symbolised_later.gstrace");
  {
    tr::TraceHeader h;
    h.set_pid(778);
    h.mutable_capture()->set_mode(tr::CAPTURE_MODE_CUPTI);
    h.add_devices()->set_index(0);
    auto b = TraceBuilder::Create(path, h);
    ASSERT_NE(b, nullptr);
    const uint32_t module = b->AddModule("/opt/app/libloader.so", "", 0x7f0000000000, 0x100000);
    const uint32_t raw = b->InternFrame(module, 0x1234);
    const uint32_t stack = b->InternStack({raw, b->InternSymbolizedFrame(module, 0x10, "main", "main.cc", 3)});
    testing::AddCopyLoop(b.get(), {stack}, 6000);
    ASSERT_TRUE(b->FlushChunk());
    b->SymbolizeFrame(raw, "load_batch", "loader.cc", 12);
    testing::AddCopyLoop(b.get(), {stack}, 6000, "main", 6001);
    ASSERT_TRUE(b->Finish());
  }
  ChromeExportStats stats;
  const Json root = ExportAndParse(path, &stats);
  std::remove(path.c_str());
  EXPECT_GT(stats.idle_intervals, 11000u);
  std::map<std::string, std::pair<double, double>> site_span;  // site -> first and last start
  std::map<std::string, uint64_t> call_leaves;                 // a call's leaf frame -> calls
  for (const Json& e : root["traceEvents"].items()) {
    if (e["ph"].as_string() == "X" && e["cat"].as_string() == "cuda_api") {
      ASSERT_EQ(e["args"]["stack"].type(), Json::Type::kArray) << e.Dump(0);
      ++call_leaves[e["args"]["stack"].items().front().as_string()];
    }
    if (e["ph"].as_string() != "X" || e["cat"].as_string() != "idle" || !e["args"].Has("resume_site")) continue;
    auto [it, inserted] = site_span.try_emplace(e["args"]["resume_site"].as_string(), e["ts"].as_double(), e["ts"].as_double());
    it->second.first = std::min(it->second.first, e["ts"].as_double());
    it->second.second = std::max(it->second.second, e["ts"].as_double());
  }
  ASSERT_EQ(site_span.size(), 2u) << "the raw frame's name and the symbolised one";
  ASSERT_TRUE(site_span.count("load_batch"));
  const auto raw_site = site_span.begin()->first == "load_batch" ? std::next(site_span.begin()) : site_span.begin();
  EXPECT_TRUE(absl::StrContains(raw_site->first, "libloader.so")) << raw_site->first;
  EXPECT_LT(raw_site->second.second, site_span["load_batch"].first) << "raw names first, then the function's";
  // The calls: each chunk's by the frames as its own definitions leave them.
  ASSERT_EQ(call_leaves.size(), 2u);
  EXPECT_EQ(call_leaves["load_batch (loader.cc:12)"], 6000u);
  EXPECT_EQ(call_leaves.begin()->first.find("libloader.so"), 0u) << call_leaves.begin()->first;
  EXPECT_EQ(call_leaves.begin()->second, 6000u);
}

TEST(KinetoExportTest, CopiesAreNamedAndTimedAsKinetoDoes) {
  const std::string path = TempPath("kineto_copy.gstrace");
  ASSERT_EQ(WriteLoop(path, 2, 1, 4), "");  // a pageable 64 MiB copy per step, 0.5 ms on the device
  std::ostringstream out;
  ASSERT_TRUE(ExportKinetoTrace(path, &out).ok());
  std::remove(path.c_str());
  absl::StatusOr<Json> root = Json::Parse(out.str());
  ASSERT_TRUE(root.ok()) << root.status();
  int copies = 0;
  for (const Json& e : (*root)["traceEvents"].items()) {
    if (e["ph"].as_string() != "X" || e["cat"].as_string() != "gpu_memcpy") continue;
    ++copies;
    EXPECT_EQ(e["name"].as_string(), "Memcpy HtoD (Pageable -> Device)");
    EXPECT_EQ(e["args"]["bytes"].as_int(), 64 << 20);
    // 64 MiB in 0.5 ms = 134.2 GB/s
    EXPECT_NEAR(e["args"]["memory bandwidth (GB/s)"].as_double(), (64 << 20) / 500e3, 0.01);
  }
  EXPECT_EQ(copies, 2);
}

TEST(KinetoExportTest, RankAndBaseTimeComeFromTheHeader) {
  const std::string path = TempPath("kineto_rank.gstrace");
  tr::TraceHeader h;
  h.set_pid(4242);
  h.set_rank(3);
  h.set_world_size(8);
  h.mutable_start_clock()->set_monotonic_ns(5'000'000'000);
  h.mutable_start_clock()->set_realtime_ns(1'700'000'000'000'000'000);
  std::string error;
  auto b = TraceBuilder::Create(path, h, TraceBuilder::Options(), &error);
  ASSERT_TRUE(b) << error;
  uint32_t launch_fn = b->InternApiFunction("cudaLaunchKernel", tr::API_CLASS_LAUNCH);
  ApiCallRecord c;
  c.thread_id = 4242;
  c.enter_ns = 5'000'100'000;
  c.exit_ns = 5'000'105'000;
  c.function = launch_fn;
  c.correlation_id = 1;
  b->AddApiCall(c);
  GpuActivityRecord a;
  a.start_ns = 5'000'200'000;
  a.end_ns = 5'000'300'500;
  a.correlation_id = 1;
  a.kind = tr::ACTIVITY_KIND_KERNEL;
  a.stream = 7;
  a.device = 1;
  b->AddActivity(a);
  ASSERT_TRUE(b->Finish());
  std::ostringstream out;
  ASSERT_TRUE(ExportKinetoTrace(path, &out).ok());
  std::remove(path.c_str());
  EXPECT_TRUE(absl::StrContains(out.str(), "\"rank\": 3, \"world_size\": 8"));
  absl::StatusOr<Json> root = Json::Parse(out.str());
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ((*root)["baseTimeNanoseconds"].as_int(), 1'700'000'000'000'000'000);
  bool kernel = false;
  for (const Json& e : (*root)["traceEvents"].items()) {
    if (e["ph"].as_string() != "X" || e["cat"].as_string() != "kernel") continue;
    kernel = true;
    EXPECT_NEAR(e["ts"].as_double(), 200.0, 1e-9);  // µs after the start clock
    EXPECT_NEAR(e["dur"].as_double(), 100.5, 1e-9);
    EXPECT_EQ(e["pid"].as_int(), 1);
    EXPECT_EQ(e["tid"].as_int(), 7);
  }
  EXPECT_TRUE(kernel);
}

TEST_F(ExportTest, CollapsedStacksSumToTheAttributedIdle) {
  absl::StatusOr<Analysis> analysis = AnalyzeTraces({path_}, AllStacksOptions());
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  std::ostringstream out;
  TimeNs written = WriteCollapsedStacks(*analysis, &out);
  TimeNs causes = 0;
  for (const CauseShare& c : analysis->causes) causes += c.idle_ns;
  EXPECT_GT(written, 0);
  EXPECT_EQ(written, analysis->steady_idle_ns);
  EXPECT_EQ(written, causes);
  TimeNs parsed = 0;
  int lines = 0;
  for (absl::string_view line : absl::StrSplit(out.str(), '\n', absl::SkipEmpty())) {
    ++lines;
    size_t space = line.rfind(' ');
    ASSERT_NE(space, absl::string_view::npos) << line;
    int64_t value;
    ASSERT_TRUE(absl::SimpleAtoi(line.substr(space + 1), &value)) << line;
    EXPECT_GT(value, 0);
    parsed += value;
    std::vector<absl::string_view> frames = absl::StrSplit(line.substr(0, space), ';');
    // The enclosing NVTX ranges come first, as frames above the root ("[nvtx] train step").
    while (frames.size() > 1 && absl::StartsWith(frames.front(), "[nvtx] ")) frames.erase(frames.begin());
    EXPECT_TRUE(absl::StartsWith(frames.front(), "main")) << "root first: " << line;
    EXPECT_TRUE(frames.size() < 2 || absl::StartsWith(frames[1], "train_step")) << "caller -> callee: " << line;
  }
  EXPECT_EQ(parsed, written);
  EXPECT_GT(lines, 0);
}

// The same loop without and with the planted problem (a pageable copy per step).
class DiffTest : public ::testing::Test {
 protected:
  void SetUp() override {
    clean_ = TempPath("clean.gstrace");
    planted_ = TempPath("planted.gstrace");
    ASSERT_EQ(WriteLoop(clean_, 10, 5, 0), "");
    ASSERT_EQ(WriteLoop(planted_, 10, 5, 8), "");
  }
  void TearDown() override {
    std::remove(clean_.c_str());
    std::remove(planted_.c_str());
  }
  TraceDiff Diff(const std::string& before, const std::string& after) {
    absl::StatusOr<Analysis> b = AnalyzeTraces({before}, AllStacksOptions());
    absl::StatusOr<Analysis> a = AnalyzeTraces({after}, AllStacksOptions());
    EXPECT_TRUE(b.ok() && a.ok());
    return DiffAnalyses(*b, *a);
  }
  std::string clean_, planted_;
};

TEST_F(DiffTest, PlantedProblemGrowsItsCauseAndStack) {
  TraceDiff d = Diff(clean_, planted_);
  EXPECT_LT(d.after_utilization, d.before_utilization);
  EXPECT_GT(d.after_idle_ns, d.before_idle_ns);
  const CauseDelta& pageable = d.causes[static_cast<int>(Cause::kPageableCopy)];
  EXPECT_EQ(pageable.before_ns, 0);
  // ~7.5 ms per step after the first (the first gap is start-up, not steady-state idle).
  EXPECT_GT(pageable.after_ns, 9 * 7 * static_cast<TimeNs>(kMs));
  EXPECT_GT(pageable.after_share, 0.3);
  // The largest growth is the planted copy's stack, with its cause.
  ASSERT_FALSE(d.grew.empty());
  const StackDelta& top = d.grew.front();
  std::string joined = absl::StrJoin(top.functions, ";");
  EXPECT_TRUE(absl::StrContains(joined, "copy_batch")) << joined;
  EXPECT_EQ(top.cause, Cause::kPageableCopy);
  EXPECT_EQ(top.before_ns, 0);
  for (const StackDelta& s : d.shrank) EXPECT_FALSE(absl::StrContains(absl::StrJoin(s.functions, ";"), "copy_batch"));

  std::string text = RenderDiffText(d);
  EXPECT_TRUE(absl::StrContains(text, "pageable")) << text;
  EXPECT_TRUE(absl::StrContains(text, "copy_batch")) << text;
  absl::StatusOr<Json> json = Json::Parse(RenderDiffJson(d));
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ((*json)["stacks_grew"].items().front()["cause"].as_string(), "pageable_copy");
  EXPECT_EQ((*json)["causes"].size(), static_cast<size_t>(kNumCauses));
}

TEST_F(DiffTest, FixingTheProblemShrinksIt) {
  TraceDiff d = Diff(planted_, clean_);
  EXPECT_GT(d.after_utilization, d.before_utilization);
  const CauseDelta& pageable = d.causes[static_cast<int>(Cause::kPageableCopy)];
  EXPECT_LT(pageable.delta_ns(), 0);
  ASSERT_FALSE(d.shrank.empty());
  EXPECT_TRUE(absl::StrContains(absl::StrJoin(d.shrank.front().functions, ";"), "copy_batch"));
}

TEST_F(DiffTest, IdenticalRunsHaveNoStackChanges) {
  TraceDiff d = Diff(clean_, clean_);
  EXPECT_TRUE(d.grew.empty());
  EXPECT_TRUE(d.shrank.empty());
  for (const CauseDelta& c : d.causes) EXPECT_EQ(c.delta_ns(), 0);
}

TEST(DiffWhatIfTest, TheStragglersPredictionIsSetAgainstTheAfterSidesRanks) {
  // Two jobs' analyses as the ranks section and the step join leave them (--what-if): before, a
  // straggler predicted to bring the 40 ms step to 10 ms; after, the ranks measured at 11 ms.
  Analysis before, after;
  before.replay.ran = after.replay.ran = true;
  before.ranks.present = after.ranks.present = true;
  before.ranks.step_ns = 40 * kMs;
  before.ranks.run_ns = 500 * kMs;
  StragglerVerdict& v = before.ranks.straggler;
  v.found = true;
  v.prediction.ran = v.prediction.ok = true;
  v.prediction.measured_step_ns = 40 * kMs;
  v.prediction.predicted_step_ns = 10 * kMs;
  v.prediction.measured_wall_ns = 500 * kMs;
  v.prediction.predicted_wall_ns = 140 * kMs;
  v.prediction.measured_utilization = 0.5;
  v.prediction.predicted_utilization = 0.7;
  after.ranks.step_ns = 11 * kMs;
  after.ranks.run_ns = 150 * kMs;
  DeviceSummary device;
  device.wall_ns = 150 * kMs;
  device.compute_busy_ns = 90 * kMs;
  after.devices.push_back(device);

  TraceDiff d = DiffAnalyses(before, after);
  ASSERT_EQ(d.predictions.size(), 1u);
  const PredictionCheck& p = d.predictions[0];
  EXPECT_EQ(p.kind, "straggler");
  EXPECT_EQ(p.before_step_ns, 40 * kMs);
  EXPECT_EQ(p.predicted_step_ns, 10 * kMs);
  EXPECT_EQ(p.after_step_ns, 11 * kMs);
  EXPECT_NEAR(p.step_error(), -1.0 / 11, 1e-12);
  EXPECT_EQ(p.after_wall_ns, 150 * kMs);
  EXPECT_DOUBLE_EQ(p.after_utilization, 0.6);
  EXPECT_FALSE(p.still_recommended);  // the after side names no straggler
  const std::string text = RenderDiffText(d);
  EXPECT_TRUE(absl::StrContains(text, "straggler — no longer recommended after")) << text;
  EXPECT_TRUE(absl::StrContains(text, "step 40.0 ms -> predicted 10.0 ms, measured 11.0 ms (prediction -9.1%)"))
      << text;
  absl::StatusOr<Json> json = Json::Parse(RenderDiffJson(d));
  ASSERT_TRUE(json.ok()) << json.status();
  const Json& j = (*json)["what_if"]["predictions"].items().front();
  EXPECT_EQ(j["step_ns_predicted"].as_int(), 10 * kMs);
  EXPECT_EQ(j["step_ns_after"].as_int(), 11 * kMs);

  // No prediction when the join did not hold.
  before.ranks.straggler.prediction.ok = false;
  EXPECT_TRUE(DiffAnalyses(before, after).predictions.empty());
}

}  // namespace
}  // namespace gs::analyzer
