// One test per cause rule (gap_classifier.h): synthetic timelines whose answer is known exactly.
#include "analyzer/classify/gap_classifier.h"

#include "analyzer/testing/synthetic_trace.h"
#include "gtest/gtest.h"

namespace gs::analyzer {
namespace {

using testing::SyntheticTrace;
constexpr TimeNs kUs = 1'000, kMs = 1'000'000;

TimeNs CauseOf(const TraceResult& r, Cause c) { return r.causes[static_cast<int>(c)]; }
TimeNs Total(const TraceResult& r) {
  TimeNs s = 0;
  for (TimeNs v : r.causes) s += v;
  return s;
}

// K1 on the device [10µs, 1ms); the thread launches K2 at `k2_enter` (5 µs call), K2 starts
// 5 µs after the call returns.
SyntheticTrace TwoKernels(TimeNs k2_enter, uint32_t stack2 = 0) {
  SyntheticTrace t;
  t.Launch(1, 0, 5 * kUs, 10 * kUs, 1 * kMs);
  t.Launch(1, k2_enter, k2_enter + 5 * kUs, k2_enter + 10 * kUs, k2_enter + 2 * kMs, stack2);
  return t;
}

TEST(GapClassifierTest, HostWorkIsTimeOutsideCudaCalls) {
  SyntheticTrace t = TwoKernels(11 * kMs);
  TraceResult r = t.Run();
  ASSERT_EQ(r.intervals.count, 1u);
  EXPECT_EQ(Total(r), 10 * kMs + 10 * kUs);  // gap [1 ms, 11.01 ms)
  EXPECT_EQ(CauseOf(r, Cause::kHostWork), 10 * kMs);
  EXPECT_EQ(CauseOf(r, Cause::kLaunchOverhead), 5 * kUs);  // inside the launch call
  EXPECT_EQ(CauseOf(r, Cause::kLaunchLatency), 5 * kUs);   // returned, not yet started
  EXPECT_EQ(r.intervals.host_late, 1u);
}

TEST(GapClassifierTest, AllocatorIsTimeInsideAllocationCalls) {
  SyntheticTrace t = TwoKernels(11 * kMs);
  t.Call(1, ApiClass::kMalloc, 2 * kMs, 5 * kMs);
  t.Call(1, ApiClass::kFree, 6 * kMs, 8 * kMs);
  TraceResult r = t.Run();
  EXPECT_EQ(CauseOf(r, Cause::kAllocator), 5 * kMs);
  EXPECT_EQ(CauseOf(r, Cause::kHostWork), 5 * kMs);
  EXPECT_EQ(Total(r), 10 * kMs + 10 * kUs);
}

TEST(GapClassifierTest, PageableCopyIsTimeStagingAPageableCopy) {
  SyntheticTrace t;
  t.Launch(1, 0, 5 * kUs, 10 * kUs, 1 * kMs);
  // Synchronous H2D copy from pageable memory: the host stages for 6.5 ms before the DMA starts.
  t.Copy(1, 1500 * kUs, 9 * kMs, 8 * kMs, 9 * kMs, CopyDirection::kHostToDevice, MemKind::kPageable,
         64 << 20, /*async=*/false);
  TraceResult r = t.Run();
  EXPECT_EQ(CauseOf(r, Cause::kHostWork), 500 * kUs);
  EXPECT_EQ(CauseOf(r, Cause::kPageableCopy), 6500 * kUs);
  EXPECT_EQ(Total(r), 7 * kMs);
}

TEST(GapClassifierTest, PinnedCopyInFlightIsLaunchOverheadNotPageable) {
  SyntheticTrace t;
  t.Launch(1, 0, 5 * kUs, 10 * kUs, 1 * kMs);
  t.Copy(1, 2 * kMs, 3 * kMs, 2100 * kUs, 3 * kMs, CopyDirection::kHostToDevice, MemKind::kPinned, 1 << 20, false);
  TraceResult r = t.Run();
  EXPECT_EQ(CauseOf(r, Cause::kPageableCopy), 0);
  EXPECT_EQ(CauseOf(r, Cause::kLaunchOverhead), 100 * kUs);
  EXPECT_EQ(CauseOf(r, Cause::kHostWork), 1 * kMs);
}

TEST(GapClassifierTest, BackToBackLaunchesOfShortKernelsAreLaunchOverhead) {
  SyntheticTrace t;
  // 10 µs launch calls 5 µs apart, kernels of 2 µs: the device drains faster than the host fills.
  t.Launch(1, 0, 10 * kUs, 12 * kUs, 14 * kUs);
  t.Launch(1, 15 * kUs, 25 * kUs, 27 * kUs, 29 * kUs);
  TraceResult r = t.Run();
  ASSERT_EQ(r.intervals.count, 1u);  // [14 µs, 27 µs)
  EXPECT_EQ(CauseOf(r, Cause::kLaunchOverhead), 11 * kUs);  // 1 µs dispatch + 10 µs in call
  EXPECT_EQ(CauseOf(r, Cause::kLaunchLatency), 2 * kUs);
  EXPECT_EQ(CauseOf(r, Cause::kHostWork), 0);
}

TEST(GapClassifierTest, HostTimeBetweenLaunchesAboveThresholdIsHostWork) {
  SyntheticTrace t;
  AnalysisOptions o;
  t.Launch(1, 0, 10 * kUs, 12 * kUs, 14 * kUs);
  TimeNs next = 10 * kUs + o.back_to_back_max_ns + 1;
  t.Launch(1, next, next + 10 * kUs, next + 12 * kUs, next + 14 * kUs);
  TraceResult r = t.Run(o);
  EXPECT_EQ(CauseOf(r, Cause::kHostWork), next - 14 * kUs);
}

TEST(GapClassifierTest, WorkQueuedBeforeIdleThatStartsLateIsDeviceWait) {
  SyntheticTrace t;
  t.Launch(1, 0, 5 * kUs, 10 * kUs, 1 * kMs);
  ApiCall& wait = t.Call(1, ApiClass::kStreamWaitEvent, 50 * kUs, 52 * kUs);
  wait.stream = 0x99;
  ApiCall& k2 = t.Launch(1, 100 * kUs, 105 * kUs, 3 * kMs, 4 * kMs, 0, 0, 8);
  k2.stream = 0x99;
  TraceResult r = t.Run();
  EXPECT_EQ(CauseOf(r, Cause::kDeviceWait), 2 * kMs);
  EXPECT_EQ(Total(r), 2 * kMs);
  EXPECT_EQ(r.intervals.queued_before, 1u);
  EXPECT_EQ(r.intervals.with_stream_wait, 1u);
}

TEST(GapClassifierTest, WorkQueuedBeforeIdleStartingWithinLimitIsLaunchLatency) {
  SyntheticTrace t;
  t.Launch(1, 0, 5 * kUs, 10 * kUs, 1 * kMs);
  t.Launch(1, 100 * kUs, 105 * kUs, 1 * kMs + 8 * kUs, 2 * kMs);
  TraceResult r = t.Run();
  EXPECT_EQ(CauseOf(r, Cause::kLaunchLatency), 8 * kUs);
  EXPECT_EQ(Total(r), 8 * kUs);
  EXPECT_EQ(r.intervals.with_stream_wait, 0u);
}

TEST(GapClassifierTest, WorkWithoutHostCallIsOther) {
  SyntheticTrace t;
  t.Kernel(0, 1 * kMs);
  t.Kernel(3 * kMs, 4 * kMs);
  TraceResult r = t.Run();
  EXPECT_EQ(CauseOf(r, Cause::kOther), 2 * kMs);
  EXPECT_EQ(r.intervals.no_host_call, 1u);
}

TEST(GapClassifierTest, TimeInsideSyncWhileDeviceIdleIsOther) {
  SyntheticTrace t = TwoKernels(11 * kMs);
  t.Call(1, ApiClass::kQuery, 3 * kMs, 4 * kMs);
  TraceResult r = t.Run();
  EXPECT_EQ(CauseOf(r, Cause::kOther), 1 * kMs);
}

TEST(GapClassifierTest, HostWorkAfterStreamSyncIsMarkedAfterSync) {
  SyntheticTrace t = TwoKernels(11 * kMs);
  uint32_t site = t.Stack({"wait_for_loss@train.py:77", "train_step", "main"});
  t.Call(1, ApiClass::kStreamSync, 20 * kUs, 1 * kMs + 3 * kUs, site);
  TraceResult r = t.Run();
  EXPECT_EQ(r.intervals.after_sync_count, 1u);
  EXPECT_EQ(r.intervals.after_sync_idle_ns, 10 * kMs + 10 * kUs);
  ASSERT_EQ(r.intervals.after_sync_sites.size(), 1u);
  EXPECT_EQ(r.intervals.after_sync_sites[0].api, "cudaStreamSynchronize");
  EXPECT_EQ(r.intervals.after_sync_sites[0].frame.function, "wait_for_loss");
  EXPECT_EQ(r.intervals.after_sync_sites[0].frame.line, 77u);
  // The 3 µs still inside the sync after the device went idle are not host work.
  EXPECT_EQ(CauseOf(r, Cause::kOther), 3 * kUs);
}

TEST(GapClassifierTest, BlockingDeviceToHostCopyCountsAsSync) {
  SyntheticTrace t;
  t.Launch(1, 0, 5 * kUs, 10 * kUs, 1 * kMs);
  // .item(): a blocking D2H copy right after the kernel.
  t.Copy(1, 20 * kUs, 1010 * kUs, 1 * kMs, 1005 * kUs, CopyDirection::kDeviceToHost, MemKind::kPageable, 4, false);
  t.Launch(1, 5 * kMs, 5005 * kUs, 5010 * kUs, 6 * kMs);
  TraceResult r = t.Run();
  EXPECT_EQ(r.intervals.after_sync_count, 1u);
}

TEST(GapClassifierTest, SyncLongBeforeTheGapIsNotAfterSync) {
  SyntheticTrace t;
  t.Call(1, ApiClass::kDeviceSync, 0, 1 * kUs);
  t.Launch(1, 2 * kUs, 7 * kUs, 10 * kUs, 1 * kMs);
  t.Launch(1, 5 * kMs, 5005 * kUs, 5010 * kUs, 6 * kMs);
  TraceResult r = t.Run();
  EXPECT_EQ(r.intervals.after_sync_count, 0u);
}

TEST(GapClassifierTest, SamplesSplitHostWorkByStateAndStack) {
  SyntheticTrace t = TwoKernels(11 * kMs);
  uint32_t read = t.Stack({"read_file@io.cc:10", "load_batch@workload.cc:42", "main"});
  uint32_t decode = t.Stack({"decode@img.cc:5", "load_batch@workload.cc:42", "main"});
  for (int i = 0; i < 3; ++i) t.AddSample(1, (2 + i) * kMs, read, /*IO_WAIT=*/4);
  t.AddSample(1, 6 * kMs, decode, /*RUNNING=*/1);
  TraceResult r = t.Run();
  // Host work [1 ms, 11 ms): each sample stands for the time it is the nearest sample to:
  // 2 ms -> [1, 2.5), 3 ms -> [2.5, 3.5), 4 ms -> [3.5, 5), 6 ms -> [5, 11).
  EXPECT_EQ(r.host_states[static_cast<int>(HostState::kIoWait)], 4 * kMs);
  EXPECT_EQ(r.host_states[static_cast<int>(HostState::kCpu)], 6 * kMs);
  TimeNs read_ns = 0;
  for (const auto& s : r.stacks)
    if (!s.frames.empty() && s.frames[0].function == "read_file") read_ns = s.by_cause[static_cast<int>(Cause::kHostWork)];
  EXPECT_EQ(read_ns, 4 * kMs);
}

TEST(GapClassifierTest, HostWorkWithoutASampleOfItsOwnIsUnsampled) {
  // The thread waits in a device sync [10 µs, 1.005 ms) (sampled there: lock_wait), then does
  // host work [1.005 ms, 11 ms) that no sample falls in, then launches K2 (a sample at 12 ms,
  // after the launch: io_wait). Neither sample says what the host work was: it is unsampled,
  // not split between the states of the samples around it.
  SyntheticTrace t = TwoKernels(11 * kMs);
  t.Call(1, ApiClass::kDeviceSync, 10 * kUs, 1005 * kUs);
  uint32_t sync = t.Stack({"cudaDeviceSynchronize", "main"});
  uint32_t after = t.Stack({"read_file@io.cc:10", "main"});
  t.AddSample(1, 500 * kUs, sync, /*FUTEX=*/5);
  t.AddSample(1, 12 * kMs, after, /*IO_WAIT=*/4);
  Analysis a = t.Analyze();
  EXPECT_EQ(a.host_work_states[static_cast<int>(HostState::kUnsampled)], 9995 * kUs);
  for (int i = 1; i < kNumHostStates; ++i)
    EXPECT_EQ(a.host_work_states[i], 0) << HostStateName(static_cast<HostState>(i));
  // Said so, not left to look like a trace without thread states.
  bool said = false;
  for (const std::string& n : a.notes) said |= n.find("no sample was taken in it") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(GapClassifierTest, SampleBeforeTheGapInTheSameHostWorkStandsForIt) {
  // No call between the sample at 0.5 ms and the gap: the thread was doing the same host work,
  // so that sample stands for all of [1 ms, 11 ms) (the one at 12 ms is after K2's launch).
  SyntheticTrace t = TwoKernels(11 * kMs);
  uint32_t before = t.Stack({"decode@img.cc:5", "main"});
  uint32_t after = t.Stack({"read_file@io.cc:10", "main"});
  t.AddSample(1, 500 * kUs, before, /*RUNNING=*/1);
  t.AddSample(1, 12 * kMs, after, /*IO_WAIT=*/4);
  TraceResult r = t.Run();
  EXPECT_EQ(r.host_states[static_cast<int>(HostState::kUnsampled)], 0);
  EXPECT_EQ(r.host_states[static_cast<int>(HostState::kCpu)], 10 * kMs);
  EXPECT_EQ(r.host_states[static_cast<int>(HostState::kIoWait)], 0);
}

TEST(GapClassifierTest, SamplesInsideABlockingCopyAreNotHostWork) {
  // launch K1; a blocking D2H copy [20 µs, 5.1 ms) waits for it (a futex: samples at 1..5 ms say
  // lock_wait); then bookkeeping sleeps [5.1 ms, 11.1 ms) (a sample at 8 ms says sleep); then K2.
  // The sample at 5 ms is the nearest one to [5.1 ms, 6.5 ms), but it was taken inside the copy:
  // the host work is all sleep, none of it lock wait.
  SyntheticTrace t;
  uint32_t copy = t.Stack({"cudaMemcpy", "read_loss@step.cc:20", "main"});
  uint32_t sleep = t.Stack({"nanosleep", "bookkeeping@step.cc:30", "main"});
  t.Launch(1, 0, 5 * kUs, 10 * kUs, 5 * kMs);
  t.Copy(1, 20 * kUs, 5100 * kUs, 5 * kMs, 5050 * kUs, CopyDirection::kDeviceToHost, MemKind::kPinned, 4,
         /*async=*/false, copy);
  t.Launch(1, 11100 * kUs, 11105 * kUs, 11110 * kUs, 12 * kMs);
  for (int i = 1; i <= 5; ++i) t.AddSample(1, i * kMs, copy, /*FUTEX=*/5);
  t.AddSample(1, 8 * kMs, sleep, /*SLEEP=*/7);
  Analysis a = t.Analyze();
  EXPECT_EQ(a.causes[static_cast<int>(Cause::kHostWork)].idle_ns, 6 * kMs);
  EXPECT_EQ(a.host_work_states[static_cast<int>(HostState::kSleep)], 6 * kMs);
  EXPECT_EQ(a.host_work_states[static_cast<int>(HostState::kLockWait)], 0);
  EXPECT_EQ(a.host_work_states[static_cast<int>(HostState::kUnsampled)], 0);
  ASSERT_FALSE(a.host_state_stacks[static_cast<int>(HostState::kSleep)].empty());
  bool bookkeeping = false;
  for (const auto& f : a.host_state_stacks[static_cast<int>(HostState::kSleep)][0].frames)
    bookkeeping |= f.function == "bookkeeping";
  EXPECT_TRUE(bookkeeping);
  EXPECT_TRUE(a.host_state_stacks[static_cast<int>(HostState::kLockWait)].empty());
}

TEST(GapClassifierTest, SparseSamplesStandForMoreTime) {
  // A running thread's samples come late and sparse (its signal waits for the CPU), a blocked
  // thread's on time: one CPU sample at 2 ms, then I/O samples every 0.5 ms from 8 ms on. By
  // count the CPU phase would get 1/7 of the host work; by time it gets [1, 5) of [1, 11).
  SyntheticTrace t = TwoKernels(11 * kMs);
  uint32_t cpu = t.Stack({"decode@img.cc:5", "main"});
  uint32_t io = t.Stack({"read_file@io.cc:10", "main"});
  t.AddSample(1, 2 * kMs, cpu, /*RUNNING=*/1);
  for (int i = 0; i < 6; ++i) t.AddSample(1, 8 * kMs + i * 500 * kUs, io, /*IO_WAIT=*/4);
  TraceResult r = t.Run();
  EXPECT_EQ(r.host_states[static_cast<int>(HostState::kCpu)], 4 * kMs);
  EXPECT_EQ(r.host_states[static_cast<int>(HostState::kIoWait)], 6 * kMs);
}

// Recorded waits (blocking libc calls the agent timed exactly): thread states from ThreadState.
constexpr uint8_t kRunning = 1, kLockWait = 5, kIdle = 7;

TimeNs HostWorkOn(const TraceResult& r, const std::string& leaf) {
  TimeNs ns = 0;
  for (const auto& s : r.stacks)
    if (!s.frames.empty() && s.frames[0].function == leaf) ns += s.by_cause[static_cast<int>(Cause::kHostWork)];
  return ns;
}

TEST(GapClassifierTest, WaitIsChargedExactlyAndBorrowsNothing) {
  // Host work [1 ms, 7 ms) before K2's launch at 7 ms: a nanosleep [1.2 ms, 6.7 ms) (5.5 ms,
  // recorded) and one sample at 1.1 ms, CPU on decode. The 5.5 ms are sleep on the wait's stack;
  // the sample stands for the rest only. Before waits, that one sample stood for all 6 ms (CPU).
  SyntheticTrace t = TwoKernels(7 * kMs);
  uint32_t sleep = t.Stack({"throttle@loop.cc:7", "train_step", "main"});
  uint32_t decode = t.Stack({"decode@img.cc:5", "main"});
  t.AddWait(1, 1200 * kUs, 6700 * kUs, sleep, kIdle);
  t.AddSample(1, 1100 * kUs, decode, kRunning);
  TraceResult r = t.Run();
  EXPECT_EQ(CauseOf(r, Cause::kHostWork), 6 * kMs);
  EXPECT_EQ(r.host_states[static_cast<int>(HostState::kSleep)], 5500 * kUs);
  EXPECT_EQ(r.host_exact_ns, 5500 * kUs);
  EXPECT_EQ(HostWorkOn(r, "throttle"), 5500 * kUs);
  // [1, 1.2) and [6.7, 7): the sample's, nothing unsampled, nothing more.
  EXPECT_EQ(r.host_states[static_cast<int>(HostState::kCpu)], 500 * kUs);
  EXPECT_EQ(HostWorkOn(r, "decode"), 500 * kUs);
  EXPECT_EQ(r.host_states[static_cast<int>(HostState::kUnsampled)], 0);
}

TEST(GapClassifierTest, SampleInsideAWaitStandsForNoTimeOutsideIt) {
  // Host work [1 ms, 7 ms): a condition-variable wait [1.5 ms, 6.5 ms) with a sample inside it
  // (lock wait on the waiting code). The wait says what [1.5, 6.5) was; the sample says nothing
  // about [1, 1.5) or [6.5, 7): those are unsampled, not lock wait.
  SyntheticTrace t = TwoKernels(7 * kMs);
  uint32_t queue = t.Stack({"queue_get@q.cc:3", "main"});
  uint32_t inside = t.Stack({"pthread_cond_wait", "queue_get@q.cc:3", "main"});
  t.AddWait(1, 1500 * kUs, 6500 * kUs, queue, kLockWait);
  t.AddSample(1, 4 * kMs, inside, kLockWait);
  TraceResult r = t.Run();
  EXPECT_EQ(r.host_states[static_cast<int>(HostState::kLockWait)], 5 * kMs);
  EXPECT_EQ(r.host_states[static_cast<int>(HostState::kUnsampled)], 1 * kMs);
  EXPECT_EQ(HostWorkOn(r, "queue_get"), 5 * kMs);
  EXPECT_EQ(HostWorkOn(r, "pthread_cond_wait"), 0);
}

TEST(GapClassifierTest, StretchWithoutWaitOrSampleStaysUnsampled) {
  // Host work [1 ms, 11 ms) split by a malloc [5 ms, 6 ms): a wait covers [2, 4) of the first
  // stretch; the second stretch [6, 11) has neither a wait nor a sample: unsampled, and the wait
  // before the call does not reach across it.
  SyntheticTrace t = TwoKernels(11 * kMs);
  t.Call(1, ApiClass::kMalloc, 5 * kMs, 6 * kMs);
  uint32_t read = t.Stack({"read_file@io.cc:10", "main"});
  t.AddWait(1, 2 * kMs, 4 * kMs, read, /*IO_WAIT=*/4);
  TraceResult r = t.Run();
  EXPECT_EQ(r.host_states[static_cast<int>(HostState::kIoWait)], 2 * kMs);
  EXPECT_EQ(r.host_states[static_cast<int>(HostState::kUnsampled)], 7 * kMs);  // [1,2) [4,5) [6,11)
  EXPECT_EQ(CauseOf(r, Cause::kAllocator), 1 * kMs);
}

TEST(GapClassifierTest, WaitThatStartedInsideACudaCallCountsFromItsExit) {
  // A blocking D2H copy [20 µs, 3 ms); a poll the driver made inside it was recorded as a wait
  // [2 ms, 5 ms) on the same thread; K2 at 8 ms. Only [3 ms, 5 ms) of the wait is host work (the
  // copy's part is the copy's); [5, 8) has no evidence: unsampled.
  SyntheticTrace t;
  uint32_t copy = t.Stack({"cudaMemcpy", "read_loss@step.cc:20", "main"});
  uint32_t poll = t.Stack({"poll", "wait_io@io.cc:8", "main"});
  t.Launch(1, 0, 5 * kUs, 10 * kUs, 1 * kMs);
  t.Copy(1, 20 * kUs, 3 * kMs, 2 * kMs, 2050 * kUs, CopyDirection::kDeviceToHost, MemKind::kPinned, 4,
         /*async=*/false, copy);
  t.Launch(1, 8 * kMs, 8005 * kUs, 8010 * kUs, 9 * kMs);
  t.AddWait(1, 2 * kMs, 5 * kMs, poll, /*IO_WAIT=*/4);
  TraceResult r = t.Run();
  EXPECT_EQ(r.host_states[static_cast<int>(HostState::kIoWait)], 2 * kMs);
  EXPECT_EQ(r.host_exact_ns, 2 * kMs);
  EXPECT_EQ(HostWorkOn(r, "poll"), 2 * kMs);
  EXPECT_EQ(r.host_states[static_cast<int>(HostState::kUnsampled)], 3 * kMs);
  TimeNs host = 0;
  for (TimeNs ns : r.host_states) host += ns;
  EXPECT_EQ(host, CauseOf(r, Cause::kHostWork));
}

TEST(GapClassifierTest, SamplesAroundAWaitStandForTheTimeOutsideIt) {
  // Host work [1 ms, 11 ms): CPU samples at 2 ms and 9 ms, a sleep [3 ms, 8 ms) between them.
  // The samples stand for [1, 3) and [8, 11) (their midpoint 5.5 ms lies in the wait), the wait
  // for its 5 ms; nothing unsampled.
  SyntheticTrace t = TwoKernels(11 * kMs);
  uint32_t cpu = t.Stack({"decode@img.cc:5", "main"});
  uint32_t sleep = t.Stack({"throttle@loop.cc:7", "main"});
  t.AddSample(1, 2 * kMs, cpu, kRunning);
  t.AddSample(1, 9 * kMs, cpu, kRunning);
  t.AddWait(1, 3 * kMs, 8 * kMs, sleep, kIdle);
  TraceResult r = t.Run();
  EXPECT_EQ(r.host_states[static_cast<int>(HostState::kCpu)], 5 * kMs);
  EXPECT_EQ(r.host_states[static_cast<int>(HostState::kSleep)], 5 * kMs);
  EXPECT_EQ(r.host_states[static_cast<int>(HostState::kUnsampled)], 0);
}

TEST(GapClassifierTest, SubmittingThreadIsTheResumeCallsThread) {
  SyntheticTrace t = TwoKernels(11 * kMs);
  // Another thread is inside cudaMalloc during the gap: it did not submit, so it does not count.
  t.Call(2, ApiClass::kMalloc, 2 * kMs, 9 * kMs);
  TraceResult r = t.Run();
  EXPECT_EQ(CauseOf(r, Cause::kAllocator), 0);
  EXPECT_EQ(CauseOf(r, Cause::kHostWork), 10 * kMs);
}

}  // namespace
}  // namespace gs::analyzer
