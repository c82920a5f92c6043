#include "analyzer/analysis/trace_analyzer.h"
#include "analyzer/classify/site_frame.h"

#include <algorithm>
#include <random>

#include "analyzer/result/analysis_builder.h"
#include "analyzer/testing/synthetic_trace.h"
#include "gtest/gtest.h"

namespace gs::analyzer {
namespace {

using testing::SyntheticTrace;
constexpr TimeNs kUs = 1'000, kMs = 1'000'000;

// A loop: each step the host works `host` then launches a kernel of `kernel`.
SyntheticTrace Loop(int steps, TimeNs host, TimeNs kernel, uint32_t device = 0, uint64_t thread = 1,
                    TimeNs t0 = 0) {
  SyntheticTrace t;
  TimeNs now = t0;
  for (int i = 0; i < steps; ++i) {
    now += host;
    t.Launch(thread, now, now + 5 * kUs, now + 10 * kUs, now + 10 * kUs + kernel, 0, device);
    now += 10 * kUs + kernel;
  }
  return t;
}

TEST(TraceAnalyzerTest, OutOfOrderActivitiesGiveTheSameAnswer) {
  SyntheticTrace sorted = Loop(200, 3 * kMs, 1 * kMs);
  SyntheticTrace shuffled = sorted;
  std::mt19937 rng(42);
  std::shuffle(shuffled.activities().begin(), shuffled.activities().end(), rng);
  TraceResult a = sorted.Run(), b = shuffled.Run();
  ASSERT_EQ(a.devices.size(), 1u);
  EXPECT_EQ(a.devices[0].busy_ns, b.devices[0].busy_ns);
  EXPECT_EQ(a.devices[0].steady_idle_ns, b.devices[0].steady_idle_ns);
  EXPECT_EQ(a.causes, b.causes);
  EXPECT_EQ(a.intervals.count, 199u);
  EXPECT_EQ(b.intervals.count, 199u);
}

TEST(TraceAnalyzerTest, CausesSumToSteadyIdle) {
  SyntheticTrace t = Loop(50, 2 * kMs, 1 * kMs);
  TraceResult r = t.Run();
  TimeNs sum = 0;
  for (TimeNs v : r.causes) sum += v;
  EXPECT_EQ(sum, r.devices[0].steady_idle_ns);
  EXPECT_EQ(r.devices[0].busy_ns + r.devices[0].steady_idle_ns, r.devices[0].steady_wall_ns);
}

TEST(TraceAnalyzerTest, SeveralDevicesAreAnalysedApart) {
  SyntheticTrace t = Loop(10, 1 * kMs, 1 * kMs, /*device=*/0, /*thread=*/1);
  // Device 1 runs one long kernel covering device 0's gaps: it must not hide them.
  t.Launch(2, 0, 5 * kUs, 10 * kUs, 30 * kMs, 0, /*device=*/1);
  TraceResult r = t.Run();
  ASSERT_EQ(r.devices.size(), 2u);
  EXPECT_EQ(r.devices[0].device, 0u);
  EXPECT_EQ(r.devices[0].idle_intervals, 9u);
  EXPECT_EQ(r.devices[1].idle_intervals, 0u);
  EXPECT_EQ(r.devices[1].busy_ns, 30 * kMs - 10 * kUs);
}

TEST(TraceAnalyzerTest, LeadingAndTrailingIdleAreReportedApart) {
  SyntheticTrace t;
  t.Call(1, ApiClass::kMalloc, 0, 100 * kMs);               // start-up
  t.Launch(1, 100 * kMs, 101 * kMs, 102 * kMs, 110 * kMs);
  t.Call(1, ApiClass::kFree, 150 * kMs, 200 * kMs);          // tear-down
  TraceResult r = t.Run();
  const DeviceSummary& d = r.devices[0];
  EXPECT_EQ(d.wall_ns, 200 * kMs);
  EXPECT_EQ(d.leading_idle_ns, 102 * kMs);
  EXPECT_EQ(d.trailing_idle_ns, 90 * kMs);
  EXPECT_EQ(d.steady_idle_ns, 0);
  EXPECT_EQ(d.idle_ns, 192 * kMs);
  EXPECT_EQ(r.intervals.count, 0u);
  EXPECT_DOUBLE_EQ(d.utilization, 8.0 / 200);
  EXPECT_DOUBLE_EQ(d.steady_utilization, 1.0);
}

TEST(TraceAnalyzerTest, ActivityArrivingAfterTheWindowIsCountedLate) {
  AnalysisOptions o;
  o.sort_window_ns = 1 * kMs;
  SyntheticTrace t = Loop(5000, 100 * kUs, 100 * kUs);
  t.Kernel(1 * kMs, 1 * kMs + 1);  // arrives last, long after its time was released
  TraceResult r = t.Run(o);
  EXPECT_EQ(r.info.losses.late_activities, 1u);
}

TEST(TraceAnalyzerTest, AttributionSharesFollowTheStacks) {
  SyntheticTrace t;
  uint32_t load = t.Stack({"copy_in@w.cc:10", "load_batch@w.cc:42", "train_step@w.cc:80", "main@w.cc:100"});
  uint32_t step = t.Stack({"forward@w.cc:60", "train_step@w.cc:80", "main@w.cc:100"});
  TimeNs now = 0;
  for (int i = 0; i < 10; ++i) {
    now += 3 * kMs;  // host work before a launch from load_batch
    t.Launch(1, now, now + 5 * kUs, now + 10 * kUs, now + 1 * kMs, load);
    now += 1 * kMs;
    now += 1 * kMs;  // host work before a launch from forward
    t.Launch(1, now, now + 5 * kUs, now + 10 * kUs, now + 1 * kMs, step);
    now += 1 * kMs;
  }
  Analysis a = t.Analyze();
  ASSERT_GE(a.top_stacks.size(), 2u);
  EXPECT_EQ(a.top_stacks[0].frames[1].function, "load_batch");
  double sum = 0;
  for (const StackShare& s : a.top_stacks) sum += s.share;
  EXPECT_NEAR(sum, 1.0, 1e-9);
  // Tree: all idle time goes through main -> train_step; load_batch holds ~3/4 of it.
  ASSERT_EQ(a.stack_tree.children.size(), 1u);
  const StackTreeNode& main = a.stack_tree.children[0];
  EXPECT_EQ(main.frame.function, "main");
  EXPECT_NEAR(main.share, 1.0, 1e-9);
  const StackTreeNode& train = main.children.at(0);
  EXPECT_EQ(train.frame.function, "train_step");
  const StackTreeNode& top = train.children.at(0);
  EXPECT_EQ(top.frame.function, "load_batch");
  EXPECT_EQ(top.frame.line, 42u);
  EXPECT_NEAR(top.share, a.top_stacks[0].share, 1e-9);
  EXPECT_GT(top.share, 0.7);
  EXPECT_LT(top.share, 0.8);
}

TEST(TraceAnalyzerTest, TracesMergeStacksByFrames) {
  AnalysisOptions o;
  AnalysisBuilder b(o);
  for (int rank = 0; rank < 2; ++rank) {
    SyntheticTrace t;
    if (rank == 1) t.Stack({"padding"});  // different ids for the same frames
    uint32_t s = t.Stack({"load_batch@w.cc:42", "main"});
    t.Launch(1, 0, 5 * kUs, 10 * kUs, 1 * kMs, s);
    t.Launch(1, 5 * kMs, 5005 * kUs, 5010 * kUs, 6 * kMs, s);
    t.info().rank = rank;
    b.AddTrace(t.Run(o));
  }
  Analysis a = b.Build();
  EXPECT_EQ(a.devices.size(), 2u);
  ASSERT_EQ(a.top_stacks.size(), 1u);
  EXPECT_EQ(a.top_stacks[0].idle_ns, 2 * (4 * kMs + 10 * kUs));
  EXPECT_NE(a.devices[0].label, a.devices[1].label);
}

}  // namespace
}  // namespace gs::analyzer

namespace gs::analyzer {
namespace {

TEST(TraceAnalyzerTest, ActivitiesWithoutTimeAreCountedNotPlaced) {
  testing::SyntheticTrace t;
  t.Launch(1, 1'000'000, 1'005'000, 1'010'000, 2'000'000);
  t.Kernel(0, 0);
  TraceResult r = t.Run();
  EXPECT_EQ(r.info.losses.activities_without_time, 1u);
  EXPECT_EQ(r.devices.at(0).leading_idle_ns, 10'000);
}

}  // namespace
}  // namespace gs::analyzer

namespace gs::analyzer {
namespace {

TEST(TraceAnalyzerTest, MemoryIsBoundedByTheWindowNotTheTraceLength) {
  // 200k steps of 1 ms (a launch with host work before it), fed as a file delivers them: calls
  // and activities interleaved in chunks. What the analyzer holds must stay near one sort
  // window (2 s = 2000 steps), whatever the length.
  InMemoryTables tables;
  AnalysisOptions o;
  TraceAnalyzer analyzer(o, tables);
  size_t max_retained = 0;
  constexpr TimeNs kUs = 1'000;
  for (uint32_t i = 0; i < 200'000; ++i) {
    TimeNs t = i * 1000 * kUs;
    ApiCall c;
    c.thread = 1;
    c.api_class = ApiClass::kLaunch;
    c.enter_ns = t + 500 * kUs;
    c.exit_ns = c.enter_ns + 5 * kUs;
    c.correlation = i + 1;
    analyzer.OnApiCall(c);
    GpuActivity a;
    a.kind = ActivityKind::kKernel;
    a.correlation = i + 1;
    a.start_ns = c.exit_ns + 5 * kUs;
    a.end_ns = t + 1000 * kUs;
    analyzer.OnActivity(a);
    max_retained = std::max(max_retained, analyzer.retained());
  }
  TraceResult r = analyzer.Finish(TraceInfo());
  EXPECT_EQ(r.intervals.count, 199'999u);
  EXPECT_LT(max_retained, 20'000u);
}

}  // namespace
}  // namespace gs::analyzer

namespace gs::analyzer {
namespace {

FrameInfo Native(const std::string& function, const std::string& module) {
  return FrameInfo{function, "", 0, module};
}
FrameInfo Py(const std::string& function, const std::string& file, uint32_t line) {
  return FrameInfo{function, file, line, ""};
}

// A ctypes program: the sync site must be the first Python frame, not libffi or the interpreter.
TEST(SiteFrameTest, SkipsLanguageGlueToReachPythonCode) {
  const std::vector<FrameInfo> stack = {
      Native("cudaMemcpy", "/opt/simgpu/libcudart.so.13"),
      Native("libffi.so.8+0x6f7a", "/usr/lib/x86_64-linux-gnu/libffi.so.8"),
      Native("ffi_call", "/usr/lib/x86_64-linux-gnu/libffi.so.8"),
      Native("_ctypes_callproc", "/usr/lib/python3.11/lib-dynload/_ctypes.cpython-311-x86_64-linux-gnu.so"),
      Native("_PyEval_EvalFrameDefault", "/root/.pyenv/versions/3.12.1/bin/python3.12"),
      Py("Runtime.call", "/work/app/cudart.py", 245),
      Py("Runtime.memcpy", "/work/app/cudart.py", 120),
      Py("read_loss", "/work/app/train.py", 42),
      Py("main", "/work/app/train.py", 80),
      Py("<module>", "/work/app/train.py", 99)};
  EXPECT_EQ(SiteFrame(stack).function, "Runtime.call");
  EXPECT_EQ(SiteFrameIndex(stack), 5u);
}

// PyTorch-like: the framework's Python layer lives in site-packages; the site is the user's line.
TEST(SiteFrameTest, SkipsInstalledPackagesAndTheStandardLibrary) {
  const std::vector<FrameInfo> stack = {
      Native("cudaStreamSynchronize", "/usr/lib/libcudart.so.13"),
      Native("at::cuda::stream_synchronize", "/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so"),
      Native("_PyEval_EvalFrameDefault", "/usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0"),
      Py("synchronize", "/venv/lib/python3.12/site-packages/torch/cuda/__init__.py", 985),
      Py("wrapper", "/usr/lib/python3.12/contextlib.py", 81),
      Py("train_step", "/home/me/train.py", 17)};
  EXPECT_EQ(SiteFrame(stack).function, "train_step");
  EXPECT_EQ(SiteFrameIndex(stack), 5u);
  // All library code: the innermost Python frame says where the program was.
  const std::vector<FrameInfo> library_only(stack.begin(), stack.begin() + 5);
  EXPECT_EQ(SiteFrame(library_only).function, "synchronize");
  // No Python frame either: the innermost named native frame.
  const std::vector<FrameInfo> native_only(stack.begin(), stack.begin() + 3);
  EXPECT_EQ(SiteFrame(native_only).function, "cudaStreamSynchronize");
}

TEST(SiteFrameTest, NativeProgramsKeepTheirFirstOwnFrame) {
  const std::vector<FrameInfo> stack = {Native("cudaMemcpy", "/usr/lib/libcudart.so.13"),
                                        FrameInfo{"read_loss", "sync_heavy.cu", 30, "/w/workload"},
                                        FrameInfo{"main", "sync_heavy.cu", 70, "/w/workload"}};
  EXPECT_EQ(SiteFrame(stack).function, "read_loss");
  EXPECT_FALSE(IsLibraryFrame(stack[1]));
  EXPECT_TRUE(IsLibraryFrame(stack[0]));
}

}  // namespace
}  // namespace gs::analyzer
