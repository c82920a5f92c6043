#include "analyzer/whatif/replay.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/analysis/analyze_traces.h"
#include "analyzer/whatif/replay_observer.h"
#include "analyzer/whatif/what_ifs.h"
#include "gtest/gtest.h"

namespace gs::analyzer::whatif {
namespace {

constexpr TimeNs kUs = 1000;
constexpr TimeNs kMs = 1000 * kUs;

// One thread's program, written call by call with the device work each call started.
class Program {
 public:
  // A call of `cls` on `thread` from `enter` for `ns`; returns its index.
  size_t Call(TimeNs enter, TimeNs ns, ApiClass cls, uint64_t stream = 0x10, uint64_t thread = 1) {
    ApiCall c;
    c.thread = thread;
    c.enter_ns = enter;
    c.exit_ns = enter + ns;
    c.api_class = cls;
    c.stream = stream;
    c.async = true;
    if (IsEnqueue(cls)) c.correlation = ++correlation_;
    records.calls.push_back(c);
    return records.calls.size() - 1;
  }
  // Device work of call `call` on CUPTI stream `stream`; returns its index.
  size_t Work(size_t call, TimeNs start, TimeNs ns, uint32_t stream = 7,
              ActivityKind kind = ActivityKind::kKernel) {
    GpuActivity a;
    a.kind = kind;
    a.start_ns = start;
    a.end_ns = start + ns;
    a.correlation = records.calls[call].correlation;
    a.stream = stream;
    records.work.push_back(a);
    return records.work.size() - 1;
  }
  ReplayRecords records;

 private:
  uint32_t correlation_ = 0;
};

// Launch, launch, launch (the second and third queue behind the first kernel), a stream sync that
// waits for the last kernel, host work, one more launch, and a final sync.
Program SyncedSteps() {
  Program p;
  const size_t l0 = p.Call(0, 10 * kUs, ApiClass::kLaunch);
  p.Work(l0, 15 * kUs, 1 * kMs);  // idle stream: latency 15 us
  const size_t l1 = p.Call(20 * kUs, 10 * kUs, ApiClass::kLaunch);
  p.Work(l1, 1015 * kUs + 2 * kUs, 1 * kMs);  // queued: 2 us after its predecessor
  const size_t l2 = p.Call(40 * kUs, 10 * kUs, ApiClass::kLaunch);
  p.Work(l2, 2017 * kUs + 2 * kUs, 1 * kMs);
  p.Call(60 * kUs, 3019 * kUs - 60 * kUs + 5 * kUs, ApiClass::kStreamSync);  // returns 5 us after the work
  const size_t l3 = p.Call(3024 * kUs + 4 * kMs, 10 * kUs, ApiClass::kLaunch);  // 4 ms of host work first
  p.Work(l3, 3024 * kUs + 4 * kMs + 15 * kUs, 1 * kMs);
  p.Call(3024 * kUs + 4 * kMs + 20 * kUs, 1 * kMs, ApiClass::kStreamSync);
  return p;
}

TEST(ReplayTest, ProfilerStepsEndWhenTheWorkTheirCallsLaunchedEnds) {
  // SyncedSteps in profiler steps: step 0 from -5 us (the first three launches and their sync),
  // step 1 from 7 ms (the last launch, 4 ms of host work after the sync, and its sync), step 2
  // from 8.1 ms (begun last: incomplete, no calls).
  const Program p = SyncedSteps();
  const ProfilerSteps steps = TieProfilerSteps(p.records, {-5 * kUs, 7 * kMs, 8100 * kUs});
  ASSERT_EQ(steps.steps, 3);
  EXPECT_EQ(steps.first_call, 0);
  EXPECT_EQ(steps.first_before, 5 * kUs);
  EXPECT_EQ(steps.call_step, (std::vector<int32_t>{0, 0, 0, 0, 1, 1}));
  const ReplayGraph graph(p.records, {}, steps);
  // Two complete steps, from -5 us to the end of the last launch's kernel (7024 + 15 + 1000 us).
  EXPECT_EQ(graph.Measured().profiler_step_ns, (8039 * kUs + 5 * kUs) / 2);
  EXPECT_EQ(graph.Replay().profiler_step_ns, (8039 * kUs + 5 * kUs) / 2);
  // Without the 4 ms of host work the last launch enters as the sync returns (3024 us).
  ReplayChanges no_host_work;
  no_host_work.SetHostGap(4, 0);
  EXPECT_EQ(graph.Replay(no_host_work).profiler_step_ns, (4039 * kUs + 5 * kUs) / 2);
  // Fewer than two steps: none.
  EXPECT_EQ(TieProfilerSteps(p.records, {0}).steps, 0);
  EXPECT_EQ(ReplayGraph(p.records).Measured().profiler_step_ns, 0);
}

TEST(ReplayTest, TheUnmodifiedGraphReplaysAConsistentTraceExactly) {
  const ReplayGraph graph(SyncedSteps().records);
  const ReplayGraph::Times t = graph.ReplayTimes();
  const ReplayRecords& r = graph.records();
  for (size_t i = 0; i < r.calls.size(); ++i) {
    EXPECT_EQ(t.enter[i], r.calls[i].enter_ns) << "call " << i;
    EXPECT_EQ(t.exit[i], r.calls[i].exit_ns) << "call " << i;
  }
  for (size_t w = 0; w < r.work.size(); ++w) EXPECT_EQ(t.start[w], r.work[w].start_ns) << "work " << w;
  const ReplayCheck check = CheckReplay(graph);
  EXPECT_TRUE(check.ok) << check.reason;
  EXPECT_EQ(check.replayed.wall_ns, check.measured.wall_ns);
  EXPECT_EQ(check.measured.busy_ns, 4 * kMs);
  EXPECT_EQ(graph.parameters().launch_latency_ns, 15 * kUs);
  EXPECT_EQ(graph.parameters().queued_gap_ns, 2 * kUs);
  EXPECT_EQ(graph.parameters().waits, 2u);
}

TEST(ReplayTest, ASyncFollowsTheWorkItWaitsForAndTheThreadFollowsTheSync) {
  const ReplayGraph graph(SyncedSteps().records);
  ReplayChanges shorter;
  shorter.SetWorkDuration(2, 100 * kUs);  // the last kernel before the first sync: 1 ms -> 0.1 ms
  const ReplayGraph::Times t = graph.ReplayTimes(shorter);
  const ReplayRecords& r = graph.records();
  EXPECT_EQ(t.exit[3], r.calls[3].exit_ns - 900 * kUs);   // the sync returns 0.9 ms earlier
  EXPECT_EQ(t.enter[4], r.calls[4].enter_ns - 900 * kUs); // and the host work after it moves along
  EXPECT_EQ(t.start[3], r.work[3].start_ns - 900 * kUs);
}

TEST(ReplayTest, ADroppedWaitKeepsOnlyTheCallsOwnCost) {
  const ReplayGraph graph(SyncedSteps().records);
  ReplayChanges deferred;
  deferred.DropWaits(3);
  const ReplayGraph::Times t = graph.ReplayTimes(deferred);
  EXPECT_EQ(t.exit[3], t.enter[3] + 5 * kUs);  // its tail after the work ended
  // The next launch now comes 4 ms of host work after the sync, while the queued kernels run:
  // its kernel starts at its launch latency after the call, now 4.08 ms into the run, not 7.04.
  EXPECT_EQ(t.enter[4], 60 * kUs + 5 * kUs + 4 * kMs);
  EXPECT_EQ(t.start[3], t.enter[4] + 15 * kUs);
  EXPECT_LT(graph.Replay(deferred).wall_ns, graph.Measured().wall_ns);
}

TEST(ReplayTest, WorkThatDidNotOverlapOnTheDeviceDoesNotOverlapInTheReplay) {
  // Two streams, both launched at once; the device ran the second kernel after the first.
  Program p;
  const size_t a = p.Call(0, 5 * kUs, ApiClass::kLaunch, 0x10);
  const size_t b = p.Call(5 * kUs, 5 * kUs, ApiClass::kLaunch, 0x20);
  p.Work(a, 10 * kUs, 1 * kMs, 7);
  p.Work(b, 1010 * kUs, 1 * kMs, 8);
  p.Call(10 * kUs, 2010 * kUs, ApiClass::kDeviceSync);
  const ReplayGraph graph(p.records);
  const ReplayCheck check = CheckReplay(graph);
  EXPECT_TRUE(check.ok) << check.reason;
  EXPECT_EQ(check.replayed.busy_ns, 2 * kMs);
  ReplayChanges earlier;
  earlier.SetHostGap(b, 0);  // launched together: still one after the other on the device
  const ReplayGraph::Times t = graph.ReplayTimes(earlier);
  EXPECT_GE(t.start[1], t.end[0]);
}

TEST(ReplayTest, WorkThatBeganWhileOtherWorkRanKeepsItsOffsetFromThatWorksStart) {
  // Two streams: the second kernel, launched at once, began 300 us into the first (the device
  // gave it room only then). Launched earlier in a what-if, it still begins 300 us into the first.
  Program p;
  const size_t a = p.Call(0, 5 * kUs, ApiClass::kLaunch, 0x10);
  const size_t b = p.Call(100 * kUs, 5 * kUs, ApiClass::kLaunch, 0x20);
  p.Work(a, 10 * kUs, 1 * kMs, 7);
  p.Work(b, 310 * kUs, 1 * kMs, 8);
  p.Call(110 * kUs, 1210 * kUs, ApiClass::kDeviceSync);
  const ReplayGraph graph(p.records);
  EXPECT_TRUE(CheckReplay(graph).ok);
  ReplayChanges sooner;
  sooner.SetHostGap(b, 0);
  const ReplayGraph::Times t = graph.ReplayTimes(sooner);
  EXPECT_EQ(t.start[1], t.start[0] + 300 * kUs);
  EXPECT_EQ(graph.Replay(sooner).busy_ns, graph.Measured().busy_ns);
}

TEST(ReplayTest, AStreamWaitEventOrdersWorkAcrossStreams) {
  Program p;
  const size_t k1 = p.Call(0, 5 * kUs, ApiClass::kLaunch, 0x10);
  p.Work(k1, 10 * kUs, 1 * kMs, 7);
  const size_t rec = p.Call(10 * kUs, 5 * kUs, ApiClass::kEventRecord, 0x10);
  p.records.calls[rec].address = 0xe1;
  const size_t wait = p.Call(20 * kUs, 5 * kUs, ApiClass::kStreamWaitEvent, 0x20);
  p.records.calls[wait].address = 0xe1;
  const size_t k2 = p.Call(30 * kUs, 5 * kUs, ApiClass::kLaunch, 0x20);
  // Stream 8's first work so that its handle is known, then k2 waiting for k1.
  const size_t k0 = p.Call(-100 * kUs, 5 * kUs, ApiClass::kLaunch, 0x20);
  p.Work(k0, -90 * kUs, 10 * kUs, 8, ActivityKind::kMemset);
  p.Work(k2, 1010 * kUs + 3 * kUs, 1 * kMs, 8);
  const ReplayGraph graph(p.records);
  ReplayChanges shorter;
  shorter.SetWorkDuration(0, 500 * kUs);
  const ReplayGraph::Times t = graph.ReplayTimes(shorter);
  EXPECT_EQ(t.start[2], 10 * kUs + 500 * kUs);  // right after k1's new end
  EXPECT_TRUE(CheckReplay(graph).ok);
}

TEST(ReplayTest, WorkDelayedByWhatTheModelDoesNotSeeFailsTheCheckAndSaysWhy) {
  // Twenty queued kernels 2 us apart, one of them started 10 ms late (something unseen held the
  // device), and a sync at the end.
  Program p;
  TimeNs next = 10 * kUs;
  for (int i = 0; i < 20; ++i) {
    const size_t l = p.Call(i * 10 * kUs, 5 * kUs, ApiClass::kLaunch);
    p.Work(l, next, 100 * kUs);
    next += 100 * kUs + (i == 10 ? 10 * kMs : 2 * kUs);
  }
  p.Call(200 * kUs, next - 200 * kUs, ApiClass::kStreamSync);
  const ReplayCheck check = CheckReplay(ReplayGraph(p.records));
  EXPECT_FALSE(check.ok);
  EXPECT_LT(check.wall_error, -0.03);
  EXPECT_NE(check.reason.find("wall time"), std::string::npos) << check.reason;
  EXPECT_NE(check.reason.find("more than 3%"), std::string::npos) << check.reason;
}

TEST(ReplayTest, ANestedCallKeepsItsOffsetInsideItsParent) {
  Program p;
  const size_t outer = p.Call(0, 50 * kUs, ApiClass::kLaunch);
  const size_t inner = p.Call(10 * kUs, 20 * kUs, ApiClass::kLaunch);  // cuLaunchKernel inside
  p.records.calls[inner].correlation = 99;
  p.Work(inner, 40 * kUs, 1 * kMs);
  const ReplayGraph graph(p.records);
  EXPECT_TRUE(graph.Nested(inner));
  EXPECT_FALSE(graph.Nested(outer));
  const size_t after = p.Call(100 * kUs, 5 * kUs, ApiClass::kOther);
  const ReplayGraph with_after(p.records);
  ReplayChanges sooner;
  sooner.SetHostGap(outer, 0);
  EXPECT_EQ(with_after.parameters().nested_calls, 1u);
  EXPECT_EQ(with_after.HostGap(after), 50 * kUs);
  EXPECT_EQ(with_after.ReplayTimes().start[0], 40 * kUs);
}

// What each fix changes (what_ifs.h), on small programs.
// The fix of `kind` predicted on `p`'s trace, whose unmodified replay must hold; its measured run
// in *measured_wall. Fails the test and returns nothing when no such fix is predicted.
std::optional<WhatIf> PredictedFix(const Program& p, const std::string& kind, TimeNs* measured_wall) {
  const ReplayGraph graph(p.records);
  const ReplayCheck check = CheckReplay(graph);
  EXPECT_TRUE(check.ok) << check.reason;
  *measured_wall = graph.Measured().wall_ns;
  InMemoryTables tables;
  for (WhatIf& w : PredictFixes(graph, {}, tables))
    if (w.kind == kind) return std::move(w);
  ADD_FAILURE() << "no " << kind << " prediction";
  return std::nullopt;
}

TEST(WhatIfTest, AllocationsThatCostNothingShortenTheRunByTheirTime) {
  Program p;
  const size_t l = p.Call(0, 10 * kUs, ApiClass::kLaunch);
  p.Work(l, 20 * kUs, 1 * kMs);
  p.Call(20 * kUs, 5 * kMs, ApiClass::kMalloc);
  const size_t l2 = p.Call(5020 * kUs, 10 * kUs, ApiClass::kLaunch);
  p.Work(l2, 5040 * kUs, 1 * kMs);
  p.Call(5040 * kUs, 1 * kMs, ApiClass::kStreamSync);
  TimeNs measured = 0;
  const std::optional<WhatIf> allocator = PredictedFix(p, "allocator", &measured);
  ASSERT_TRUE(allocator.has_value());
  EXPECT_EQ(allocator->changed, 1u);
  // The second kernel now queues right behind the first (the trace measured no queued gap), and
  // the final sync returns when it ends: 2.02 ms instead of 6.04.
  EXPECT_EQ(measured, 6040 * kUs);
  EXPECT_EQ(allocator->figures.wall_ns, 2020 * kUs);
}

TEST(WhatIfTest, PinnedUploadsCostALaunchEachAndMoveAtTwiceTheirPageableBandwidth) {
  // A launch (8 us, its kernel 50 us), then four uploads of 1 MB from pageable memory, each a
  // blocking 110 us call: its copy runs 100 us from 5 us after the call (10 GB/s), the call
  // returns 5 us after the copy; 10 us of host work between calls; a final sync of an idle stream.
  Program p;
  const size_t l = p.Call(0, 8 * kUs, ApiClass::kLaunch);
  p.Work(l, 10 * kUs, 50 * kUs);
  TimeNs t = 200 * kUs;
  for (int i = 0; i < 4; ++i) {
    const size_t c = p.Call(t, 110 * kUs, ApiClass::kMemcpy);
    ApiCall& call = p.records.calls[c];
    call.direction = CopyDirection::kHostToDevice;
    call.src_kind = MemKind::kPageable;
    call.dst_kind = MemKind::kDevice;
    call.bytes = 1000000;
    const size_t w = p.Work(c, t + 5 * kUs, 100 * kUs, 7, ActivityKind::kMemcpy);
    p.records.work[w].direction = CopyDirection::kHostToDevice;
    p.records.work[w].bytes = 1000000;
    t += 120 * kUs;
  }
  p.Call(t, 5 * kUs, ApiClass::kStreamSync);
  TimeNs measured = 0;
  const std::optional<WhatIf> pin = PredictedFix(p, "pin_memory", &measured);
  ASSERT_TRUE(pin.has_value());
  EXPECT_EQ(pin->changed, 4u);
  EXPECT_EQ(measured, 685 * kUs);
  // Pinned, each upload costs the host what the trace's median launch did (8 us: the trace has
  // no asynchronous copy to cost one by) and no longer waits; the host work between calls stays.
  // The copies take 1 MB at twice their pageable 10 GB/s, 50 us each, back to back from 5 us
  // after the first call (205 us) on the stream: the last ends at 405 us, and the sync returns
  // its measured 5 us later.
  EXPECT_EQ(pin->figures.wall_ns, 410 * kUs);
}

TEST(WhatIfTest, CollapsedLaunchesCostNothingAndTheirKernelsRunBackToBack) {
  // A launch-bound loop: ten launches of 20 us each, 5 us of host work between them, their 5 us
  // kernels each starting 30 us after its launch was called (the device waits for every one: no
  // kernel was queued behind another, so the device's own gap is unseen and taken as none); then
  // a sync that returns 5 us after the last kernel.
  Program p;
  TimeNs t = 0;
  for (int i = 0; i < 10; ++i) {
    const size_t l = p.Call(t, 20 * kUs, ApiClass::kLaunch);
    p.Work(l, t + 30 * kUs, 5 * kUs);
    t += 25 * kUs;
  }
  p.Call(t, 15 * kUs, ApiClass::kStreamSync);
  TimeNs measured = 0;
  const std::optional<WhatIf> graphs = PredictedFix(p, "launch_overhead", &measured);
  ASSERT_TRUE(graphs.has_value());
  EXPECT_EQ(graphs->changed, 9u);  // every launch that follows a launch
  EXPECT_EQ(measured, 265 * kUs);
  // As one graph launch: the first call as measured (its kernel at 30-35 us), the nine others
  // free and without host work between them, all at 20 us; their kernels run back to back from
  // the measured launch latency after that (50-95 us), and the sync returns 5 us after the last.
  EXPECT_EQ(graphs->figures.wall_ns, 100 * kUs);
}

TEST(WhatIfTest, InputWorkersWaitForBatchesThatTakeTheMeasuredTimeEach) {
  // Four steps: 8 ms of batch preparation, then a copy and a 2 ms kernel; the device idles while
  // the host prepares. The analysis charged each gap's 8 ms to host work.
  Program p;
  std::vector<ClassifiedGap> gaps;
  TimeNs t = 0;
  for (int step = 0; step < 4; ++step) {
    t += 8 * kMs;
    const size_t copy = p.Call(t, 10 * kUs, ApiClass::kMemcpy);
    p.Work(copy, t + 10 * kUs, 50 * kUs, 7, ActivityKind::kMemcpy);
    const size_t l = p.Call(t + 20 * kUs, 10 * kUs, ApiClass::kLaunch);
    p.Work(l, t + 60 * kUs, 2 * kMs);
    const size_t sync = p.Call(t + 30 * kUs, 2030 * kUs + 5 * kUs, ApiClass::kStreamSync);
    t = p.records.calls[sync].exit_ns;
    if (step > 0) {
      ClassifiedGap g;
      g.resume = static_cast<int32_t>(copy);
      g.by_cause[static_cast<size_t>(Cause::kHostWork)] = 8 * kMs;
      g.length = 8 * kMs;
      gaps.push_back(g);
    }
  }
  const ReplayGraph graph(p.records);
  ASSERT_TRUE(CheckReplay(graph).ok);
  InMemoryTables tables;
  const std::vector<WhatIf> fixes = PredictFixes(graph, gaps, tables);
  TimeNs free_wall = 0, one = 0, four = 0;
  for (const WhatIf& w : fixes) {
    if (w.kind == "input_pipeline") free_wall = w.figures.wall_ns;
    if (w.kind == "input_workers" && w.workers == 1) one = w.figures.wall_ns;
    if (w.kind == "input_workers" && w.workers == 4) four = w.figures.wall_ns;
  }
  const TimeNs measured = graph.Measured().wall_ns;
  // Free input removes the three later 8 ms preparations.
  EXPECT_EQ(free_wall, measured - 3 * 8 * kMs);
  // From the first gap's preparation on, one worker has batch k ready (k + 1) x 8 ms later: the
  // first step waits its 8 ms as before, the later ones overlap the device's 2 ms with the next
  // preparation. Four workers have the three batches ready 8 ms after that start.
  EXPECT_GT(one, free_wall);
  EXPECT_LT(one, measured);
  EXPECT_EQ(four, free_wall + 8 * kMs);

  // The same gaps spent waiting on a queue (loader threads the trace does not show): the bound
  // stays, and no number of workers is predicted.
  for (ClassifiedGap& g : gaps) g.lock_wait_ns = 7 * kMs;
  const std::vector<WhatIf> queued = PredictFixes(graph, gaps, tables);
  ASSERT_EQ(queued.size(), 1u);
  EXPECT_EQ(queued[0].kind, "input_pipeline");
  EXPECT_TRUE(queued[0].producers_unseen);
  EXPECT_EQ(queued[0].figures.wall_ns, free_wall);
  // With worker processes the waits are on them: their count and pace are known.
  bool workers = false;
  for (const WhatIf& w : PredictFixes(graph, gaps, tables, {}, 2)) workers |= w.kind == "input_workers";
  EXPECT_TRUE(workers);
}

TEST(ReplayObserverTest, EveryRealPyTorchTraceOfOneProcessReplaysWithinThreePercent) {
  // The PyTorch-profiler traces the importer is tested on (analyzer/import/kineto/testdata,
  // SOURCES.md there): real GPUs, one process each (the two ranks of a job each on their own).
  for (const char* name : {"a100_alexnet.pt.trace.json.gz", "v100_resnet50_workers0.pt.trace.json.gz",
                           "v100_resnet50_workers4.pt.trace.json.gz",
                           "v100_resnet50_workers0_full.pt.trace.json.gz", "multirank/rank-0.json.gz",
                           "multirank/rank-1.json.gz", "a100_triton.json.gz", "mi250_rocm6.2.json.gz"}) {
    ReplayObserver replay;
    AnalyzeHooks hooks;
    hooks.observers.push_back(&replay);
    auto a = AnalyzeTraces({std::string(GS_KINETO_TESTDATA) + "/" + name}, AnalysisOptions(), hooks);
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_EQ(replay.replays().size(), 1u);
    const ReplayCheck& check = replay.replays()[0].check;
    EXPECT_TRUE(check.ok) << name << ": " << check.reason;
    EXPECT_LE(std::abs(check.wall_error), 0.03) << name;
    EXPECT_LE(std::abs(check.busy_error), 0.03) << name;
    EXPECT_GT(check.measured.busy_ns, 0) << name;
  }
}

TEST(ReplayObserverTest, ATraceOverTheRecordCapIsNotReplayedAndTheCheckSaysWhy) {
  ReplayObserver replay(/*max_records=*/500);
  AnalyzeHooks hooks;
  hooks.observers.push_back(&replay);
  auto a = AnalyzeTraces({std::string(GS_KINETO_TESTDATA) + "/v100_resnet50_workers0.pt.trace.json.gz"},
                         AnalysisOptions(), hooks);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(replay.replays().size(), 1u);
  const TraceReplay& r = replay.replays()[0];
  EXPECT_FALSE(r.check.ok);
  EXPECT_NE(r.check.reason.find("more than 500 API calls and pieces of device work"), std::string::npos)
      << r.check.reason;
  EXPECT_TRUE(r.what_ifs.empty());
}

}  // namespace
}  // namespace gs::analyzer::whatif
