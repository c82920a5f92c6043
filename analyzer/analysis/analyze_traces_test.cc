// AnalyzeTraces on files written with TraceBuilder: the known answer of the starved loop, and
// what bad input does.
#include "analyzer/analysis/analyze_traces.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "analyzer/classify/site_frame.h"
#include "analyzer/report/report.h"
#include "analyzer/testing/trace_files.h"
#include "gtest/gtest.h"
#include "proto/testing/trace_builder.h"

namespace gs::analyzer {
namespace {

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/analyzer_" + std::to_string(getpid()) + "_" + name;
}

double Share(const Analysis& a, Cause c) { return a.causes[static_cast<int>(c)].share; }

TEST(AnalyzeTracesTest, StarvedLoopIsHostBoundInLoadBatchAfterSync) {
  std::string path = TempPath("starved.gstrace");
  ASSERT_EQ(testing::WriteStarvedTrace(path, 12), "");
  absl::StatusOr<Analysis> a = AnalyzeTraces({path});
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->devices.size(), 1u);
  EXPECT_EQ(a->devices[0].name, "Simulated GPU");
  EXPECT_FALSE(a->losses.Any());
  // Per step: 30 ms host work + 2 ms staging the pageable copy while the GPU idles, 6 ms kernels.
  EXPECT_GT(Share(*a, Cause::kHostWork), 0.9);
  EXPECT_GT(Share(*a, Cause::kPageableCopy), 0.05);
  EXPECT_NEAR(a->SteadyUtilization(), 6.0 / 38.0, 0.01);
  EXPECT_EQ(a->intervals.after_sync_count, 11u);
  ASSERT_FALSE(a->intervals.after_sync_sites.empty());
  EXPECT_EQ(a->intervals.after_sync_sites[0].frame.function, "read_loss");
  ASSERT_FALSE(a->top_stacks.empty());
  bool has_load_batch = false;
  for (const FrameInfo& f : a->top_stacks[0].frames) has_load_batch |= f.function == "load_batch";
  EXPECT_TRUE(has_load_batch);
  EXPECT_GT(a->top_stacks[0].share, 0.9);
  ASSERT_FALSE(a->recommendations.empty());
  EXPECT_EQ(a->recommendations[0].kind, "input_pipeline");
  EXPECT_EQ(a->memory.allocations, 1u);
  EXPECT_EQ(a->memory.peak_bytes, 256u << 20);
  unlink(path.c_str());
}

// An agent trace names its device in the chunk of the first kernel (not in the header) and
// interns each launch configuration: the fill figures follow from both, computed here by hand.
TEST(AnalyzeTracesTest, AgentTraceLaunchConfigurationsSayHowFullTheKernelsKeptTheDevice) {
  namespace pb = gpustall::trace;
  const std::string path = TempPath("fill.gstrace");
  pb::TraceHeader h;
  h.set_schema_version(trace::kSchemaVersion);
  h.set_pid(7);
  h.mutable_start_clock()->set_monotonic_ns(1'000'000'000);
  auto b = trace::testing::TraceBuilder::Create(path, h);
  ASSERT_NE(b, nullptr);
  const uint32_t launch = b->InternApiFunction("cudaLaunchKernel", pb::API_CLASS_LAUNCH);
  const uint32_t tiny_site = b->InternStackOfFunctions({"launch_tiny", "main"});
  const uint32_t big_site = b->InternStackOfFunctions({"launch_big", "main"});
  const uint32_t tiny = b->InternString("tiny_kernel"), big = b->InternString("register_bound");
  b->FlushChunk();  // a first chunk without the device
  b->AddDevice(testing::H100Device(0));
  // 1 block of 256 threads: 1 of 132 SMs.
  b->AddLaunchConfig(testing::LaunchConfigMessage(1, 1, 256, 32, 0, 0));
  // 1024 threads × 64 registers = the SM's 65536: 1 block per SM.
  b->AddLaunchConfig(testing::LaunchConfigMessage(2, 133, 1024, 64, 0, 0));
  uint64_t t = 1'000'100'000;
  uint32_t corr = 1;
  for (int i = 0; i < 10; ++i) {
    for (const auto& [name, config, site] : {std::tuple{tiny, 1u, tiny_site}, std::tuple{big, 2u, big_site}}) {
      trace::ApiCallRecord call;
      call.enter_ns = t;
      call.exit_ns = t + 5'000;
      call.thread_id = 7;
      call.function = launch;
      call.api_class = pb::API_CLASS_LAUNCH;
      call.correlation_id = corr;
      call.stack = site;
      b->AddApiCall(call);
      trace::GpuActivityRecord k;
      k.start_ns = t + 10'000;
      k.end_ns = k.start_ns + 1'000'000;
      k.kind = pb::ACTIVITY_KIND_KERNEL;
      k.source = pb::ACTIVITY_SOURCE_CUPTI;
      k.correlation_id = corr++;
      k.stream = 7;
      k.name = name;
      k.launch_config = config;
      b->AddActivity(k);
      t = k.end_ns;
    }
  }
  ASSERT_TRUE(b->Finish());
  absl::StatusOr<Analysis> a = AnalyzeTraces({path});
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->devices.size(), 1u);
  EXPECT_TRUE(a->devices[0].has_fill);
  EXPECT_TRUE(a->devices[0].has_occupancy);
  ASSERT_EQ(a->kernel_configs.size(), 2u);
  // The 1-block kernel: 10 ms × (1 − 1/132) under-filled, first; launched from launch_tiny.
  const KernelConfigStats& k1 = a->kernel_configs[0];
  EXPECT_EQ(k1.name, "tiny_kernel");
  EXPECT_EQ(k1.count, 10u);
  EXPECT_EQ(k1.sm_count, 132);
  EXPECT_NEAR(k1.fill.sm_coverage, 1.0 / 132, 1e-12);
  EXPECT_EQ(k1.fill.waves, 1);
  EXPECT_NEAR(static_cast<double>(k1.underfilled_ns), 10e6 * (1 - 1.0 / 132), 1.0);
  ASSERT_FALSE(k1.stacks.empty());
  ASSERT_FALSE(k1.stacks[0].frames.empty());
  EXPECT_EQ(k1.stacks[0].frames[0].function, "launch_tiny");
  // 133 blocks held 1 per SM by registers: two waves, the second on 1 SM: (1 + 1/132) / 2.
  const KernelConfigStats& k2 = a->kernel_configs[1];
  EXPECT_EQ(k2.name, "register_bound");
  EXPECT_EQ(k2.occupancy.active_blocks, 1);
  EXPECT_EQ(LimiterNames(k2.occupancy.limiters), "registers");
  EXPECT_EQ(k2.fill.waves, 2);
  EXPECT_NEAR(k2.fill.wave_coverage, (1 + 1.0 / 132) / 2, 1e-12);
  EXPECT_NEAR(static_cast<double>(k2.underfilled_ns), 10e6 * (1 - (1 + 1.0 / 132) / 2), 1.0);
  unlink(path.c_str());
}

TEST(AnalyzeTracesTest, HealthyTraceHasNoRecommendation) {
  std::string path = TempPath("healthy.gstrace");
  ASSERT_EQ(testing::WriteHealthyTrace(path), "");
  absl::StatusOr<Analysis> a = AnalyzeTraces({path});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_GT(a->SteadyUtilization(), 0.95);
  EXPECT_TRUE(a->recommendations.empty());
  unlink(path.c_str());
}

TEST(AnalyzeTracesTest, TruncatedTraceIsAnalysedWithAWarning) {
  std::string path = TempPath("truncated.gstrace");
  ASSERT_EQ(testing::WriteTruncatedTrace(path), "");
  absl::StatusOr<Analysis> a = AnalyzeTraces({path});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_GT(a->losses.truncated_bytes, 0u);
  ASSERT_EQ(a->warnings.size(), 1u);
  EXPECT_NE(a->warnings[0].find("cut"), std::string::npos) << a->warnings[0];
  EXPECT_GT(a->intervals.count, 3u);
  unlink(path.c_str());
}

TEST(AnalyzeTracesTest, BadInputIsAnErrorNamingTheFile) {
  std::string text = TempPath("text.txt"), newer = TempPath("newer.gstrace");
  ASSERT_EQ(testing::WriteNotATrace(text), "");
  ASSERT_EQ(testing::WriteNewerSchemaTrace(newer), "");
  absl::StatusOr<Analysis> a = AnalyzeTraces({text});
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find(text), std::string::npos) << a.status();
  absl::StatusOr<Analysis> b = AnalyzeTraces({newer});
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find(newer), std::string::npos) << b.status();
  EXPECT_FALSE(AnalyzeTraces({TempPath("missing")}).ok());
  unlink(text.c_str());
  unlink(newer.c_str());
}

TEST(AnalyzeTracesTest, SeveralTracesListTheirDevicesApart) {
  std::string p1 = TempPath("r0.gstrace"), p2 = TempPath("r1.gstrace");
  ASSERT_EQ(testing::WriteStarvedTrace(p1, 4), "");
  ASSERT_EQ(testing::WriteHealthyTrace(p2, 10), "");
  absl::StatusOr<Analysis> a = AnalyzeTraces({p1, p2});
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->devices.size(), 2u);
  EXPECT_EQ(a->devices[0].trace, 0u);
  EXPECT_EQ(a->devices[1].trace, 1u);
  EXPECT_LT(a->devices[0].steady_utilization, 0.3);
  EXPECT_GT(a->devices[1].steady_utilization, 0.95);
  unlink(p1.c_str());
  unlink(p2.c_str());
}

// With jobs > 1 a job's traces are read at once, each on a thread of its own with a fork of each
// observer, and merged and joined in input order whichever is read first; an observer that cannot
// be forked keeps them one after another on the calling thread, as jobs 1 does.
class ForkedObserver final : public TraceObserver {
 public:
  struct Shared {
    absl::Mutex mu;
    size_t begun = 0, ended = 0;
    bool all_begun_at_once = true;  // every trace's fork began before any ended
    std::vector<size_t> ended_order, joined;
    std::vector<std::thread::id> threads;
  };
  ForkedObserver(Shared* shared, size_t traces, size_t index = SIZE_MAX)
      : shared_(*shared), traces_(traces), index_(index) {}

  std::unique_ptr<TraceObserver> Fork(size_t index) override {
    return std::make_unique<ForkedObserver>(&shared_, traces_, index);
  }
  void Join(size_t index, std::unique_ptr<TraceObserver> fork) override {
    EXPECT_EQ(static_cast<ForkedObserver&>(*fork).index_, index);
    absl::MutexLock l(&shared_.mu);
    shared_.joined.push_back(index);
  }
  void BeginTrace(size_t index, const TraceImporter&, const TraceAnalyzer&) override {
    EXPECT_EQ(index, index_);
    absl::MutexLock l(&shared_.mu);
    ++shared_.begun;
    shared_.threads.push_back(std::this_thread::get_id());
    // Only traces read at once all begin before one ends (bounded: one after another never would).
    if (!shared_.mu.AwaitWithTimeout(absl::Condition(&AllBegun, &wait_all_), absl::Seconds(10))) {
      shared_.all_begun_at_once = false;
    }
  }
  void EndTrace(size_t index, const TraceImporter&, const TraceResult&) override {
    absl::MutexLock l(&shared_.mu);
    // Trace 0 ends last, so a merge in the order traces end would put it last.
    if (index == 0) {
      shared_.mu.AwaitWithTimeout(absl::Condition(&OthersEnded, &wait_all_), absl::Seconds(10));
    }
    ++shared_.ended;
    shared_.ended_order.push_back(index);
  }

 private:
  using Waiting = std::pair<Shared*, size_t>;  // the shared state, the number of traces
  static bool AllBegun(Waiting* w) { return w->first->begun == w->second; }
  static bool OthersEnded(Waiting* w) { return w->first->ended + 1 == w->second; }

  Shared& shared_;
  const size_t traces_;
  const size_t index_;
  Waiting wait_all_{&shared_, traces_};
};

// Sees every trace, one after another, on the calling thread.
class SerialObserver final : public TraceObserver {
 public:
  void BeginTrace(size_t index, const TraceImporter&, const TraceAnalyzer&) override {
    EXPECT_FALSE(open_) << index;
    EXPECT_EQ(std::this_thread::get_id(), caller_);
    open_ = true;
    begun.push_back(index);
  }
  void EndTrace(size_t index, const TraceImporter&, const TraceResult&) override {
    EXPECT_TRUE(open_) << index;
    open_ = false;
  }
  std::vector<size_t> begun;

 private:
  const std::thread::id caller_ = std::this_thread::get_id();
  bool open_ = false;
};

TEST(AnalyzeTracesTest, SeveralJobsReadTracesAtOnceAndMergeThemInInputOrder) {
  const std::vector<std::string> paths = {TempPath("jobs_r0.gstrace"), TempPath("jobs_r1.gstrace"),
                                          TempPath("jobs_r2.gstrace")};
  ASSERT_EQ(testing::WriteStarvedTrace(paths[0], 4), "");
  ASSERT_EQ(testing::WriteHealthyTrace(paths[1], 10), "");
  ASSERT_EQ(testing::WriteTruncatedTrace(paths[2]), "");
  AnalysisOptions one;
  absl::StatusOr<Analysis> serial = AnalyzeTraces(paths, one);
  ASSERT_TRUE(serial.ok()) << serial.status();
  const ReportFormat* json = FindReportFormat("json");
  ASSERT_NE(json, nullptr);

  AnalysisOptions three;
  three.jobs = 3;
  ForkedObserver::Shared shared;
  ForkedObserver forked(&shared, paths.size());
  AnalyzeHooks hooks;
  hooks.observers = {&forked};
  absl::StatusOr<Analysis> at_once = AnalyzeTraces(paths, three, hooks);
  ASSERT_TRUE(at_once.ok()) << at_once.status();
  EXPECT_EQ(json->Render(*at_once, ReportOptions()), json->Render(*serial, ReportOptions()));
  EXPECT_EQ(at_once->warnings, serial->warnings);
  ASSERT_EQ(at_once->devices.size(), 3u);
  EXPECT_LT(at_once->devices[0].steady_utilization, 0.3);  // the starved trace first, as given
  EXPECT_GT(at_once->devices[1].steady_utilization, 0.95);
  EXPECT_TRUE(shared.all_begun_at_once);
  EXPECT_EQ(shared.ended_order.back(), 0u);
  EXPECT_EQ(shared.joined, (std::vector<size_t>{0, 1, 2}));
  ASSERT_EQ(shared.threads.size(), 3u);
  for (std::thread::id t : shared.threads) EXPECT_NE(t, std::this_thread::get_id());

  // With an observer that has no fork, the same pass reads one trace after another.
  SerialObserver serial_observer;
  hooks.observers = {&serial_observer};
  absl::StatusOr<Analysis> in_turn = AnalyzeTraces(paths, three, hooks);
  ASSERT_TRUE(in_turn.ok()) << in_turn.status();
  EXPECT_EQ(json->Render(*in_turn, ReportOptions()), json->Render(*serial, ReportOptions()));
  EXPECT_EQ(serial_observer.begun, (std::vector<size_t>{0, 1, 2}));
  for (const std::string& p : paths) unlink(p.c_str());
}

// Forks that count the traces in flight (begun, not ended) and the most at one time.
class InFlightObserver final : public TraceObserver {
 public:
  struct Shared {
    absl::Mutex mu;
    int in_flight = 0, most = 0;
    std::vector<size_t> begun;
  };
  explicit InFlightObserver(Shared* shared) : shared_(*shared) {}
  std::unique_ptr<TraceObserver> Fork(size_t) override { return std::make_unique<InFlightObserver>(&shared_); }
  void BeginTrace(size_t index, const TraceImporter&, const TraceAnalyzer&) override {
    {
      absl::MutexLock l(&shared_.mu);
      shared_.most = std::max(shared_.most, ++shared_.in_flight);
      shared_.begun.push_back(index);
    }
    // Long enough for the other threads to begin theirs if the pass lets them.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  void EndTrace(size_t, const TraceImporter&, const TraceResult&) override {
    absl::MutexLock l(&shared_.mu);
    --shared_.in_flight;
  }

 private:
  Shared& shared_;
};

// Several traces at once hold memory that grows with each trace: the pass starts the next one
// only while the estimate of those in flight fits AnalysisOptions::trace_memory_budget, and always
// runs the next one to merge.
TEST(AnalyzeTracesTest, SeveralJobsStartNoMoreTracesThanTheMemoryBudgetHolds) {
  const std::vector<std::string> paths = {TempPath("budget_r0.gstrace"), TempPath("budget_r1.gstrace"),
                                          TempPath("budget_r2.gstrace"), TempPath("budget_r3.gstrace")};
  for (const std::string& p : paths) ASSERT_EQ(testing::WriteHealthyTrace(p, 10), "");
  struct stat st;
  ASSERT_EQ(stat(paths[0].c_str(), &st), 0);
  const uint64_t one = static_cast<uint64_t>(st.st_size) * kTraceMemoryPerFileByte;
  AnalysisOptions serial_options;
  absl::StatusOr<Analysis> serial = AnalyzeTraces(paths, serial_options);
  ASSERT_TRUE(serial.ok()) << serial.status();
  const ReportFormat* json = FindReportFormat("json");
  ASSERT_NE(json, nullptr);
  for (const auto& [budget, most] : std::vector<std::pair<uint64_t, int>>{
           {1, 1}, {one, 1}, {2 * one, 2}, {100 * one, 4}}) {
    AnalysisOptions options;
    options.jobs = 4;
    options.trace_memory_budget = budget;
    InFlightObserver::Shared shared;
    InFlightObserver observer(&shared);
    AnalyzeHooks hooks;
    hooks.observers = {&observer};
    absl::StatusOr<Analysis> a = AnalyzeTraces(paths, options, hooks);
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_EQ(shared.most, most) << "budget " << budget << " for traces reckoned at " << one << " each";
    EXPECT_EQ(shared.begun.size(), paths.size());
    EXPECT_EQ(json->Render(*a, ReportOptions()), json->Render(*serial, ReportOptions()));
  }
  for (const std::string& p : paths) unlink(p.c_str());
}

// `gpustall demo` from a wheel: the workload's script lives in site-packages, as does the helper
// module whose cpu_work() it calls; the trace header's command line runs that script. Every idle
// gap ends in the copy load_batch() submits, and the report's first stack is shown by load_batch,
// not by the interpreter's entry through libc.
TEST(AnalyzeTracesTest, AScriptInsideSitePackagesIsTheUsersCode) {
  namespace tr = gpustall::trace;
  const std::string path = TempPath("installed_script.gstrace");
  const std::string folder = "/tmp/v/lib/python3.11/site-packages/gpustall/_native/workloads/";
  tr::TraceHeader h;
  h.set_pid(7);
  h.add_command_line("/tmp/v/bin/python");
  h.add_command_line(folder + "data_starved.py");
  h.add_command_line("--steps");
  h.add_command_line("8");
  h.set_executable("/usr/bin/python3.11");
  h.set_working_directory("/tmp/work");
  h.mutable_capture()->set_mode(tr::CAPTURE_MODE_CUPTI);
  h.mutable_capture()->set_native_stacks(true);
  h.mutable_capture()->set_python_stacks(true);
  h.add_devices()->set_name("Simulated GPU");
  auto b = gs::trace::testing::TraceBuilder::Create(path, h);
  ASSERT_NE(b, nullptr);
  const uint32_t libc = b->AddModule("/usr/lib/x86_64-linux-gnu/libc.so.6", "", 0x7f0000000000, 0x200000);
  const uint32_t python = b->AddModule("/usr/bin/python3.11", "", 0x400000, 0x400000);
  const uint32_t rt = b->AddModule(folder + "../simgpu/lib/libcudart.so.13", "", 0x7f1000000000, 0x100000);
  const std::vector<uint32_t> entry = {b->InternSymbolizedFrame(python, 0x1000, "_PyEval_EvalFrameDefault", "", 0),
                                       b->InternFrame(libc, 0x2724a),
                                       b->InternSymbolizedFrame(libc, 0x27305, "__libc_start_main", "", 0),
                                       b->InternSymbolizedFrame(python, 0x20, "_start", "", 0)};
  const std::vector<uint32_t> script = {b->InternPythonFrame("load_batch", folder + "data_starved.py", 27),
                                        b->InternPythonFrame("main", folder + "data_starved.py", 52),
                                        b->InternPythonFrame("<module>", folder + "data_starved.py", 70)};
  std::vector<uint32_t> copy = {b->InternSymbolizedFrame(rt, 0x500, "cudaMemcpyAsync", "", 0),
                                b->InternPythonFrame("Runtime.memcpy_async", folder + "cudart.py", 140)};
  copy.insert(copy.end(), script.begin(), script.end());
  copy.insert(copy.end(), entry.begin(), entry.end());
  const uint32_t copy_stack = b->InternStack(copy);
  testing::AddCopyLoop(b.get(), {copy_stack}, 8, "python");
  ASSERT_TRUE(b->Finish());
  absl::StatusOr<Analysis> an = AnalyzeTraces({path});
  ASSERT_TRUE(an.ok()) << an.status();
  ASSERT_FALSE(an->top_stacks.empty());
  const FrameInfo site = SiteFrame(an->top_stacks[0].frames);
  EXPECT_EQ(site.function, "load_batch");
  EXPECT_EQ(site.file, folder + "data_starved.py");
  EXPECT_TRUE(site.main_program);
  // The caller → callee tree starts at the script's <module>, not at _start and the interpreter.
  ASSERT_EQ(an->stack_tree.children.size(), 1u);
  EXPECT_EQ(an->stack_tree.children[0].frame.function, "<module>");
  unlink(path.c_str());
}

// A loop that throttles itself: each step sleeps 8 ms in nanosleep (recorded by the agent as a
// host wait, with the throttle stack), computes 1 ms, then launches a 2 ms kernel. The trace has
// no samples. The report says the host work is sleep, measured, on throttle's stack; before
// waits were read it was all unsampled and charged to the launch's stack.
TEST(AnalyzeTracesTest, RecordedWaitsSayWhatTheHostDidWithoutSamples) {
  namespace tr = gpustall::trace;
  const std::string path = TempPath("host_waits.gstrace");
  tr::TraceHeader h;
  h.set_pid(9);
  h.add_command_line("./loop");
  h.mutable_capture()->set_mode(tr::CAPTURE_MODE_CUPTI);
  h.mutable_capture()->set_native_stacks(true);
  h.add_devices()->set_name("Simulated GPU");
  auto b = gs::trace::testing::TraceBuilder::Create(path, h);
  ASSERT_NE(b, nullptr);
  const uint32_t sleep_stack = b->InternStackOfFunctions({"throttle@loop.cc:12", "train_step@loop.cc:30", "main@loop.cc:50"});
  const uint32_t launch_stack =
      b->InternStackOfFunctions({"cudaLaunchKernel", "train_step@loop.cc:33", "main@loop.cc:50"});
  const uint32_t launch_fn = b->InternApiFunction("cudaLaunchKernel", tr::API_CLASS_LAUNCH);
  const uint32_t nanosleep = b->InternString("nanosleep");
  b->AddThread(100, "loop", true);
  constexpr uint64_t kMs = 1'000'000, kUs = 1'000;
  constexpr int kSteps = 10;
  uint64_t now = 5'000'000'000;
  for (uint32_t step = 1; step <= kSteps; ++step) {
    gs::trace::HostWaitRecord w;
    w.thread_id = 100;
    w.start_ns = now;
    w.end_ns = now + 8 * kMs;
    w.function = nanosleep;
    w.stack = sleep_stack;
    w.state = tr::THREAD_STATE_IDLE;
    b->AddHostWait(w);
    now += 9 * kMs;  // 8 ms asleep, 1 ms computing
    gs::trace::ApiCallRecord c;
    c.thread_id = 100;
    c.enter_ns = now;
    c.exit_ns = now + 10 * kUs;
    c.function = launch_fn;
    c.stack = launch_stack;
    c.correlation_id = step;
    c.stream = 7;
    b->AddApiCall(c);
    gs::trace::GpuActivityRecord a;
    a.start_ns = now + 20 * kUs;
    a.end_ns = now + 2 * kMs;
    a.correlation_id = step;
    a.kind = tr::ACTIVITY_KIND_KERNEL;
    a.source = tr::ACTIVITY_SOURCE_CUPTI;
    a.stream = 7;
    b->AddActivity(a);
    now += 2 * kMs;
  }
  ASSERT_TRUE(b->Finish());
  absl::StatusOr<Analysis> an = AnalyzeTraces({path});
  ASSERT_TRUE(an.ok()) << an.status();
  // Steady state: kSteps - 1 gaps, each from a kernel's end to the next one's start: the rest
  // of that launch's step (sleep 8 ms fully inside, then 1 ms of unrecorded compute).
  const TimeNs host = an->causes[static_cast<int>(Cause::kHostWork)].idle_ns;
  const TimeNs sleep = an->host_work_states[static_cast<int>(HostState::kSleep)];
  EXPECT_EQ(sleep, (kSteps - 1) * 8 * TimeNs{kMs});
  EXPECT_EQ(an->host_work_exact_ns, sleep);
  EXPECT_EQ(an->host_work_states[static_cast<int>(HostState::kUnsampled)], host - sleep);
  EXPECT_GT(double(sleep) / host, 0.85);
  // The top stack is the sleep's, naming the function that slept.
  ASSERT_FALSE(an->top_stacks.empty());
  EXPECT_EQ(an->top_stacks[0].frames.at(0).function, "throttle");
  ASSERT_FALSE(an->host_state_stacks[static_cast<int>(HostState::kSleep)].empty());
  EXPECT_EQ(an->host_state_stacks[static_cast<int>(HostState::kSleep)][0].frames.at(0).function, "throttle");
  // No "no samples" note: the waits split the host work.
  for (const std::string& n : an->notes) EXPECT_EQ(n.find("not split"), std::string::npos) << n;
  const std::string text = TextReportFormat().Render(*an, ReportOptions());
  EXPECT_NE(text.find("host work measured: exact (recorded waits)"), std::string::npos) << text;
  unlink(path.c_str());
}

}  // namespace
}  // namespace gs::analyzer
