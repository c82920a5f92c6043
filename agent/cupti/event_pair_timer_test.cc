// event_pair_timer_test.cc — the event-pair timer (GS_CUPTI=off) alone against simgpu's runtime,
// in process: which work gets a start event and which is chained to its stream's previous work,
// and the times each gets. SIMGPU_LIB_DIR comes from the build. Its own binary: the capture
// source test leaves its CUPTI session running, which the agent never tears down.
#include "agent/capture/event_pair_timer.h"

#include <cuda_runtime_api.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/capture/capture_thread_state.h"
#include "agent/core/agent_thread.h"
#include "agent/core/clock.h"
#include "simgpu.h"

namespace gs {
namespace {

class MemoryRecorder : public Recorder {
 public:
  bool enabled() const override { return true; }
  void RecordApiCall(const ApiCallEvent&, bool, int) override {}
  void RecordGpuActivity(const GpuActivityEvent& activity) override {
    std::lock_guard<std::mutex> lock(mu);
    activities.push_back(activity);
  }
  void AddDropped(uint64_t cupti, uint64_t other) override { dropped += cupti + other; }
  void SetCaptureMode(const char*, const char*) override {}
  std::mutex mu;
  std::vector<GpuActivityEvent> activities;
  uint64_t dropped = 0;
};

// Work that follows the process's previous timed work on the same thread and stream gets an end
// event only, its start the later of its call's entry and that work's end; after another stream,
// another thread's work or a stream wait, work gets a start event as well.
class EventChainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(timer_.Start(recorder_));
    ASSERT_EQ(cudaStreamCreate(&a_), cudaSuccess);
    ASSERT_EQ(cudaStreamCreate(&b_), cudaSuccess);
  }
  void TearDown() override {
    cudaStreamDestroy(a_);
    cudaStreamDestroy(b_);
  }
  // One intercepted launch as the shim makes it: entry time, start event (maybe), launch, end.
  void Launch(cudaStream_t stream, const void* kernel) {
    ScopedAgentCudaCall inside;
    ApiCallEvent call{};
    call.api_class = ApiClass::kLaunch;
    call.enter_ns = MonotonicNs();
    timer_.BeforeGpuWork(reinterpret_cast<uint64_t>(stream));
    ASSERT_EQ(cudaLaunchKernel(kernel, dim3{1, 1, 1}, dim3{1, 1, 1}, nullptr, 0, stream), cudaSuccess);
    const uint64_t returned = MonotonicNs();
    timer_.AfterGpuWork(reinterpret_cast<uint64_t>(stream), ++correlation_, call);
    std::lock_guard<std::mutex> lock(calls_mu_);
    entries_.push_back(call.enter_ns);
    call_ns_.push_back(returned - call.enter_ns);
  }
  // The activities recorded so far, in correlation (launch) order.
  std::vector<GpuActivityEvent> Collect() {
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    timer_.Poll(true);
    std::lock_guard<std::mutex> lock(recorder_.mu);
    std::vector<GpuActivityEvent> out = recorder_.activities;
    std::sort(out.begin(), out.end(), [](const GpuActivityEvent& x, const GpuActivityEvent& y) {
      return x.correlation_id < y.correlation_id;
    });
    return out;
  }
  MemoryRecorder recorder_;
  EventPairTimer timer_;
  cudaStream_t a_ = nullptr, b_ = nullptr;
  uint32_t correlation_ = 0;
  std::mutex calls_mu_;             // Launch from a second thread
  std::vector<uint64_t> entries_;  // by correlation id - 1
  std::vector<uint64_t> call_ns_;  // each launch call's own time, entry to return
};

TEST_F(EventChainTest, BackToBackWorkOnOneStreamTakesOneEventEachAndKeepsItsTimes) {
  const void* kernel = simgpuKernel("chain_test_200us", 200000);
  constexpr int kLaunches = 20;  // far faster than 200 us each: the stream stays busy
  for (int i = 0; i < kLaunches; ++i) Launch(a_, kernel);
  const std::vector<GpuActivityEvent> got = Collect();
  ASSERT_EQ(got.size(), static_cast<size_t>(kLaunches));
  EXPECT_EQ(timer_.chained(), static_cast<uint64_t>(kLaunches - 1));
  for (int i = 0; i < kLaunches; ++i) {
    const GpuActivityEvent& k = got[i];
    EXPECT_EQ(k.source, ActivitySource::kEventPair);
    EXPECT_GE(k.start_ns, entries_[i]);
    // The first has a start event, stamped when it was submitted on the idle stream: its time
    // includes the rest of its launch call (the first call's is long: the module is loaded).
    if (i == 0) continue;
    // Each later one: its own 200 us (the event clock rounds to about half a microsecond)...
    EXPECT_NEAR(static_cast<double>(k.end_ns - k.start_ns), 200000.0, 20000.0) << "launch " << i;
    // ...starting where its predecessor ended.
    EXPECT_EQ(k.start_ns, std::max(entries_[i], got[i - 1].end_ns)) << "launch " << i;
  }
}

TEST_F(EventChainTest, WorkOnAnIdleStreamStartsAtItsCallsEntry) {
  const void* kernel = simgpuKernel("chain_test_idle_50us", 50000);
  Launch(a_, kernel);
  ASSERT_EQ(cudaStreamSynchronize(a_), cudaSuccess);
  timespec pause{0, 2000000};
  nanosleep(&pause, nullptr);
  Launch(a_, kernel);  // chained, but the stream has been idle for 2 ms
  const std::vector<GpuActivityEvent> got = Collect();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(timer_.chained(), 1u);
  EXPECT_EQ(got[1].start_ns, entries_[1]);
  EXPECT_GE(got[1].start_ns, got[0].end_ns + 2000000);
  EXPECT_GE(got[1].end_ns - got[1].start_ns, 50000u);
}

TEST_F(EventChainTest, AnotherStreamAnotherThreadOrAStreamWaitBreaksTheChain) {
  const void* kernel = simgpuKernel("chain_test_unchained_100us", 100000);
  for (int i = 0; i < 6; ++i) Launch(i % 2 == 0 ? a_ : b_, kernel);  // alternating streams
  EXPECT_EQ(timer_.chained(), 0u);
  Launch(a_, kernel);
  timer_.OnStreamWait();  // as the shim does before cudaStreamWaitEvent
  Launch(a_, kernel);
  EXPECT_EQ(timer_.chained(), 0u);
  std::thread other([&] { Launch(a_, kernel); });  // the same stream from another thread
  other.join();
  Launch(a_, kernel);
  EXPECT_EQ(timer_.chained(), 0u);
  Launch(a_, kernel);  // the only chained one
  EXPECT_EQ(timer_.chained(), 1u);
  const std::vector<GpuActivityEvent> got = Collect();
  ASSERT_EQ(got.size(), 11u);
  // A start event is stamped when it is submitted: the time includes the rest of the launch
  // call (tens of microseconds for a stream's or a kernel's first, more when the thread is
  // preempted inside it), never more.
  for (const GpuActivityEvent& k : got) {
    EXPECT_GE(k.end_ns - k.start_ns, 99000u) << "correlation " << k.correlation_id;
    EXPECT_LE(k.end_ns - k.start_ns, 110000u + call_ns_[k.correlation_id - 1])
        << "correlation " << k.correlation_id << ", its call took " << call_ns_[k.correlation_id - 1] << " ns";
  }
}

// Poll asks each in-flight slot's end event in slot order while the device goes on completing work
// and the application on submitting it: a later piece of a chain can be found complete after an
// earlier one was found pending or not yet in flight. Each chained start must still be its
// predecessor's end, never the end of work after it.
TEST_F(EventChainTest, ChainedWorkPolledWhileItCompletesKeepsItsStarts) {
  const void* kernel = simgpuKernel("chain_test_polled_3us", 3000);
  // In rounds of fewer than the timer's slots, each converted before the next is launched: the
  // pool never overflows, however far the device and the polls lag behind the launches.
  constexpr int kRounds = 8, kPerRound = 1000, kLaunches = kRounds * kPerRound;
  const auto converted = [this] {
    std::lock_guard<std::mutex> lock(recorder_.mu);
    return recorder_.activities.size();
  };
  std::atomic<bool> done{false};
  std::thread poller([&] {
    while (!done.load()) timer_.Poll(false);
  });
  // More runnable threads than cores, so that polls are preempted halfway, as on a loaded machine.
  std::vector<std::thread> spinners;
  for (unsigned i = 0; i < std::max(2u, std::thread::hardware_concurrency()); ++i) {
    spinners.emplace_back([&] {
      while (!done.load()) {
      }
    });
  }
  for (int round = 0; round < kRounds; ++round) {
    for (int i = 0; i < kPerRound; ++i) Launch(a_, kernel);
    const uint64_t deadline = MonotonicNs() + 20'000'000'000;
    while (converted() < static_cast<size_t>((round + 1) * kPerRound) && MonotonicNs() < deadline) {
      std::this_thread::yield();
    }
  }
  done.store(true);
  poller.join();
  for (std::thread& t : spinners) t.join();
  const std::vector<GpuActivityEvent> got = Collect();
  ASSERT_EQ(got.size(), static_cast<size_t>(kLaunches));
  int wrong = 0;
  for (int i = 1; i < kLaunches; ++i) {
    if (got[i].start_ns != std::max(entries_[i], got[i - 1].end_ns) && ++wrong <= 5) {
      ADD_FAILURE() << "launch " << i << ": start " << got[i].start_ns << ", entry " << entries_[i]
                    << ", predecessor's end " << got[i - 1].end_ns << ", end " << got[i].end_ns;
    }
  }
  EXPECT_EQ(wrong, 0);
}

// The poller is one of the agent's threads: named, so that whoever measures the agent sees it,
// and taking none of the application's signals (the kernel's view: /proc's SigBlk of the thread).
TEST_F(EventChainTest, ThePollerIsANamedThreadThatTakesNoSignal) {
  std::string blocked;
  int named = 0;
  DIR* tasks = opendir("/proc/self/task");
  ASSERT_NE(tasks, nullptr);
  while (dirent* task = readdir(tasks)) {
    if (task->d_name[0] == '.') continue;
    const std::string dir = std::string("/proc/self/task/") + task->d_name;
    std::ifstream comm(dir + "/comm");
    std::string name;
    std::getline(comm, name);
    if (name != "gpustall-events") continue;
    ++named;
    std::ifstream status(dir + "/status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("SigBlk:", 0) == 0) blocked = line.substr(7);
    }
  }
  closedir(tasks);
  ASSERT_EQ(named, 1);
  const uint64_t mask = std::stoull(blocked, nullptr, 16);
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD, SIGPROF}) {
    EXPECT_NE(mask & (uint64_t{1} << (signal - 1)), 0u) << strsignal(signal) << " in " << blocked;
  }
}

// The same, polled by the test alone (no poller thread), to count what each poll asks.
class EventPollTest : public EventChainTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(timer_.Start(recorder_, /*poller_thread=*/false));
    ASSERT_EQ(cudaStreamCreate(&a_), cudaSuccess);
    ASSERT_EQ(cudaStreamCreate(&b_), cudaSuccess);
  }
  size_t Converted() {
    std::lock_guard<std::mutex> lock(recorder_.mu);
    return recorder_.activities.size();
  }
};

// A chain's work completes in stream order, so a poll asks its newest end event, and only when
// that one is pending, finds where the completed part ends by halves: a queue of 501 pieces of
// work costs a poll about ten asks, not 501, and once it has drained, one.
TEST_F(EventPollTest, APollAsksAChainsNewestEndEventAndThenByHalves) {
  constexpr int kQueued = 500;
  Launch(a_, simgpuKernel("poll_test_long_40ms", 40'000'000));
  const void* tiny = simgpuKernel("poll_test_tiny_1us", 1000);
  for (int i = 0; i < kQueued; ++i) Launch(a_, tiny);
  uint64_t before = timer_.asked();
  timer_.Poll(false);
  // Behind 40 ms of work, none has completed (or, on a machine slow enough to take longer to
  // launch them, a prefix has): 1 + log2(501) asks at most either way.
  EXPECT_LE(timer_.asked() - before, 10u);
  const size_t early = Converted();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  before = timer_.asked();
  timer_.Poll(false);
  EXPECT_EQ(timer_.asked() - before, early == kQueued + 1 ? 0u : 1u);
  const std::vector<GpuActivityEvent> got = Collect();
  ASSERT_EQ(got.size(), static_cast<size_t>(kQueued + 1));
  EXPECT_EQ(timer_.chained(), static_cast<uint64_t>(kQueued));
  EXPECT_GE(got[0].end_ns - got[0].start_ns, 40'000'000u);
  for (int i = 1; i <= kQueued; ++i) {
    // Queued behind its predecessor: it starts at that one's end, and takes its microsecond.
    EXPECT_EQ(got[i].start_ns, std::max(entries_[i], got[i - 1].end_ns)) << "launch " << i;
    EXPECT_GE(got[i].end_ns - got[i].start_ns, 900u) << "launch " << i;
  }
}

// Two chains (one thread, two streams, alternating): after both have drained, a poll asks two
// end events for 200 pieces of work.
TEST_F(EventPollTest, APollAsksOneEndEventAChainOnceItsWorkHasCompleted) {
  const void* kernel = simgpuKernel("poll_test_two_chains_2us", 2000);
  for (int i = 0; i < 200; ++i) Launch(i % 2 == 0 ? a_ : b_, kernel);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const uint64_t before = timer_.asked();
  timer_.Poll(false);
  EXPECT_EQ(timer_.asked() - before, 2u);
  EXPECT_EQ(Converted(), 200u);
  const std::vector<GpuActivityEvent> got = Collect();
  ASSERT_EQ(got.size(), 200u);
  for (const GpuActivityEvent& k : got) {
    EXPECT_GE(k.end_ns - k.start_ns, 2000u) << "correlation " << k.correlation_id;
  }
}

}  // namespace
}  // namespace gs
