// The signal sampler and the Sampler on this test's own threads (no agent, no CUDA): a spinning
// thread, one asleep in nanosleep, one blocked reading a pipe, one waiting on a futex.
#include "agent/sampler/sampler.h"

#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <thread>

#include "agent/core/clock.h"
#include "agent/sampler/signal_stack_sampler.h"
#include "gtest/gtest.h"
#include "proto/batch_codec.h"

namespace gs {
namespace {

namespace pb = gpustall::trace;

std::atomic<bool> g_stop{false};
std::atomic<int> g_eintr{0};

__attribute__((noinline)) void SpinUntilStopped() {
  volatile uint64_t x = 1;
  while (!g_stop.load(std::memory_order_relaxed)) x = x * 6364136223846793005ull + 1;
}

// nanosleep in 5 ms slices; an EINTR would be a signal that hit a blocked thread.
void SleepUntilStopped() {
  while (!g_stop.load()) {
    timespec ts{0, 5000000};
    if (syscall(SYS_nanosleep, &ts, nullptr) != 0 && errno == EINTR) g_eintr.fetch_add(1);
  }
}

uint64_t Tid() { return static_cast<uint64_t>(syscall(SYS_gettid)); }

class FakeBuilder final : public ChunkBuilder {
 public:
  pb::Chunk c;
  std::map<uint32_t, StackView> stacks;
  uint32_t next = 1;
  pb::Chunk* chunk() override { return &c; }
  uint32_t InternString(const std::string&) override { return 0; }
  uint32_t InternStack(const StackView& s) override {
    if (s.pc_count == 0 && s.python_count == 0) return 0;
    stacks[next] = s;
    return next++;
  }
  void CountRecords(size_t) override {}
};

// Both triggers: the perf timer that fires in user mode only (the default) and the sampler's
// direct signal.
class SignalStackSamplerTest : public ::testing::TestWithParam<SignalTrigger> {};

INSTANTIATE_TEST_SUITE_P(Triggers, SignalStackSamplerTest,
                         ::testing::Values(SignalTrigger::kUserMode, SignalTrigger::kDirect),
                         [](const ::testing::TestParamInfo<SignalTrigger>& info) {
                           return info.param == SignalTrigger::kUserMode ? "UserMode" : "Direct";
                         });

TEST_P(SignalStackSamplerTest, RunningThreadAnswersWithItsStack) {
  StackCapturer stacks;
  std::string note;
  stacks.Init(StackMode::kUnwind, &note);
  SignalStackSampler sampler;
  ASSERT_TRUE(sampler.Install(&stacks, nullptr, 32, GetParam(), &note)) << note;
  ASSERT_TRUE(sampler.StillInstalled());
  g_stop = false;
  std::atomic<uint64_t> tid{0};
  std::thread spinner([&] {
    tid = Tid();
    SpinUntilStopped();
  });
  while (tid.load() == 0) std::this_thread::yield();
  int answered = 0;
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(sampler.Request(0, tid.load(), 0, 0));
    for (int wait = 0; wait < 2000 && sampler.State(0) != SignalStackSampler::kDone; ++wait) usleep(500);
    if (sampler.State(0) == SignalStackSampler::kDone) {
      const SignalSample& s = sampler.Result(0);
      EXPECT_FALSE(s.skipped);
      EXPECT_GE(s.pc_count, 2);  // the interrupted PC and its callers
      EXPECT_GT(s.time_ns, 0u);
      ++answered;
    }
    sampler.Release(0);
  }
  g_stop = true;
  spinner.join();
  EXPECT_GE(answered, 15);
}

TEST_P(SignalStackSamplerTest, AbandonedRequestIsNeverWritten) {
  SignalStackSampler sampler;
  std::string note;
  ASSERT_TRUE(sampler.Install(nullptr, nullptr, 8, GetParam(), &note)) << note;
  std::atomic<uint64_t> tid{0};
  std::atomic<bool> unblock{false}, done{false};
  std::thread blocked([&] {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sampler.signal_number());
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    tid = Tid();
    while (!unblock.load()) usleep(1000);
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);  // the pending signal lands here, too late
    done = true;
  });
  while (tid.load() == 0) std::this_thread::yield();
  ASSERT_TRUE(sampler.Request(1, tid.load(), 0, 0));
  usleep(20000);
  EXPECT_EQ(sampler.State(1), SignalStackSampler::kArmed);
  EXPECT_FALSE(sampler.Release(1));  // abandoned
  unblock = true;
  blocked.join();
  EXPECT_TRUE(done.load());
  EXPECT_EQ(sampler.State(1), SignalStackSampler::kFree);  // the late handler wrote nothing
}

TEST_P(SignalStackSamplerTest, ForeignSenderIsIgnored) {
  SignalStackSampler sampler;
  std::string note;
  ASSERT_TRUE(sampler.Install(nullptr, nullptr, 8, GetParam(), &note)) << note;
  // A plain tgkill (SI_TKILL, not our SI_QUEUE) must neither kill us nor touch a slot.
  ASSERT_EQ(syscall(SYS_tgkill, getpid(), Tid(), sampler.signal_number()), 0);
  EXPECT_EQ(sampler.State(2), SignalStackSampler::kFree);
}

__attribute__((noinline)) void ComputeFor(uint64_t ns) {
  timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  volatile uint64_t x = 1;
  do {
    for (int i = 0; i < 64; ++i) x = x * 6364136223846793005ull + 1;
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while (static_cast<uint64_t>((now.tv_sec - start.tv_sec) * 1000000000ll + (now.tv_nsec - start.tv_nsec)) < ns);
}

// The race the user-mode trigger closes: a thread that computes for 100 µs, then sleeps 100 µs
// in nanosleep (not restarted after a handler, even with SA_RESTART), over and over, asked for its
// stack back to back. A signal sent from outside lands in or on the way into the sleep about as
// often as not (the direct trigger: 4,485 EINTRs in 4,567 sleeps here); the user-mode timer's never does.
TEST(SignalStackSamplerUserModeTest, ThreadSwitchingBetweenComputeAndSleepNeverSeesEintr) {
  StackCapturer stacks;
  std::string note;
  stacks.Init(StackMode::kUnwind, &note);
  SignalStackSampler sampler;
  ASSERT_TRUE(sampler.Install(&stacks, nullptr, 32, SignalTrigger::kUserMode, &note)) << note;
  std::atomic<bool> stop{false};
  std::atomic<int> eintr{0}, sleeps{0};
  std::atomic<uint64_t> tid{0};
  std::thread worker([&] {
    tid = Tid();
    while (!stop.load(std::memory_order_relaxed)) {
      ComputeFor(100000);
      timespec ts{0, 100000};
      if (syscall(SYS_nanosleep, &ts, nullptr) != 0 && errno == EINTR) eintr.fetch_add(1);
      sleeps.fetch_add(1, std::memory_order_relaxed);
    }
  });
  while (tid.load() == 0) std::this_thread::yield();
  int answered = 0, with_stack = 0;
  const uint64_t end = MonotonicNs() + 700000000ull;
  while (MonotonicNs() < end) {
    ASSERT_TRUE(sampler.Request(3, tid.load(), 0, 0));
    for (int wait = 0; wait < 400 && sampler.State(3) != SignalStackSampler::kDone; ++wait) usleep(50);
    if (sampler.State(3) == SignalStackSampler::kDone) {
      ++answered;
      if (sampler.Result(3).pc_count >= 2) ++with_stack;
    }
    sampler.Release(3);
  }
  stop = true;
  worker.join();
  sampler.Forget(3);
  EXPECT_EQ(eintr.load(), 0) << "of " << sleeps.load() << " sleeps";
  EXPECT_EQ(sampler.eintr_races(), 0u);
  EXPECT_GT(sleeps.load(), 500);
  EXPECT_GE(answered, 200);
  EXPECT_GE(with_stack, answered * 9 / 10);
}

TEST(SamplerTest, StatesOfSpinningSleepingReadingAndWaitingThreads) {
  RingPool pool;
  ASSERT_TRUE(pool.Init(4 << 20, 64 * 1024));
  StackCapturer stacks;
  std::string note;
  stacks.Init(StackMode::kUnwind, &note);
  g_stop = false;
  g_eintr = 0;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::atomic<int> futex_word{0};
  std::map<std::string, uint64_t> tids;
  std::atomic<int> ready{0};
  auto owned = [&](const char* name, auto body) {
    return std::thread([&, name, body] {
      ThreadRing* ring = pool.Claim();
      ring->tid = Tid();
      pool.Publish(ring);
      tids[name] = ring->tid;  // written before `ready` is published
      ready.fetch_add(1);
      body();
    });
  };
  std::thread spin = owned("spin", [] { SpinUntilStopped(); });
  while (ready.load() < 1) usleep(100);
  std::thread sleep = owned("sleep", [] { SleepUntilStopped(); });
  while (ready.load() < 2) usleep(100);
  std::thread reader = owned("read", [&] {
    char c;
    while (read(fds[0], &c, 1) < 0 && errno == EINTR) g_eintr.fetch_add(1);
  });
  while (ready.load() < 3) usleep(100);
  std::thread waiter = owned("futex", [&] {
    while (futex_word.load() == 0) syscall(SYS_futex, &futex_word, 0 /*FUTEX_WAIT*/, 0, nullptr, nullptr, 0);
  });
  while (ready.load() < 4) usleep(100);

  Sampler sampler(&pool, &stacks, nullptr);
  SamplerOptions options;
  options.hz = 200;
  ASSERT_TRUE(sampler.Start(options, &note)) << note;
  usleep(500000);
  sampler.Stop();
  g_stop = true;
  futex_word = 1;
  syscall(SYS_futex, &futex_word, 1 /*FUTEX_WAKE*/, 1, nullptr, nullptr, 0);
  ASSERT_EQ(write(fds[1], "x", 1), 1);
  for (std::thread* t : {&spin, &sleep, &reader, &waiter}) t->join();
  close(fds[0]);
  close(fds[1]);

  FakeBuilder builder;
  const size_t moved = sampler.DrainInto(&builder);
  EXPECT_GT(moved, 100u);
  EXPECT_EQ(g_eintr.load(), 0);
  std::map<uint64_t, std::map<int, int>> states;  // tid -> state -> count
  std::map<uint64_t, int> with_stack;
  for (const pb::SampleBatch& batch : builder.c.samples()) {
    std::vector<trace::SampleRecord> records;
    std::string error;
    ASSERT_TRUE(trace::DecodeSampleBatch(batch, &records, &error)) << error;
    for (const auto& r : records) {
      ++states[r.thread_id][r.state];
      if (r.stack != 0) ++with_stack[r.thread_id];
    }
  }
  auto share = [&](const char* name, int state) {
    int total = 0;
    for (auto [s, n] : states[tids[name]]) total += n;
    return total > 0 ? double(states[tids[name]][state]) / total : 0.0;
  };
  EXPECT_GE(share("spin", pb::THREAD_STATE_RUNNING), 0.8);
  EXPECT_GE(share("sleep", pb::THREAD_STATE_IDLE), 0.8);
  EXPECT_GE(share("read", pb::THREAD_STATE_IO_WAIT), 0.8);
  EXPECT_GE(share("futex", pb::THREAD_STATE_LOCK_WAIT), 0.8);
  EXPECT_GT(with_stack[tids["spin"]], 0);
  pb::Stats stats;
  sampler.AddStats(&stats);
  EXPECT_EQ(stats.samples_recorded(), moved);
  const SamplerCounters c = sampler.counters();
  EXPECT_GT(c.signals_sent, 0u);
  EXPECT_EQ(c.eintr_races, 0u);
}

__attribute__((noinline)) void ReadOneByte(int fd) {
  char c;
  while (read(fd, &c, 1) < 0 && errno == EINTR) g_eintr.fetch_add(1);
  asm volatile("" ::: "memory");  // no tail call: this frame stays while it blocks
}

// A thread blocked in read() for the whole run: every sample carries its full native stack, and
// after the first unwind the sampler reuses it (the thread has not run since).
TEST(SamplerTest, BlockedThreadIsUnwoundOnceAndItsStackReused) {
  RingPool pool;
  ASSERT_TRUE(pool.Init(4 << 20, 64 * 1024));
  StackCapturer stacks;
  std::string note;
  stacks.Init(StackMode::kUnwind, &note);
  g_eintr = 0;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::atomic<uint64_t> tid{0};
  std::thread reader([&] {
    ThreadRing* ring = pool.Claim();
    ring->tid = Tid();
    pool.Publish(ring);
    tid = ring->tid;
    ReadOneByte(fds[0]);
  });
  while (tid.load() == 0) usleep(100);
  usleep(20000);  // inside read()

  Sampler sampler(&pool, &stacks, nullptr);
  SamplerOptions options;
  options.hz = 200;
  ASSERT_TRUE(sampler.Start(options, &note)) << note;
  usleep(500000);
  sampler.Stop();
  ASSERT_EQ(write(fds[1], "x", 1), 1);
  reader.join();
  close(fds[0]);
  close(fds[1]);

  FakeBuilder builder;
  sampler.DrainInto(&builder);
  int samples = 0, full = 0;
  for (const pb::SampleBatch& batch : builder.c.samples()) {
    std::vector<trace::SampleRecord> records;
    std::string error;
    ASSERT_TRUE(trace::DecodeSampleBatch(batch, &records, &error)) << error;
    for (const auto& r : records) {
      if (r.thread_id != tid.load() || r.state != pb::THREAD_STATE_IO_WAIT) continue;
      ++samples;
      // The leaf (libc's read), ReadOneByte, the lambda, std::thread's entry, ...
      if (r.stack != 0 && builder.stacks[r.stack].pc_count >= 4) ++full;
    }
  }
  EXPECT_GE(samples, 50);
  EXPECT_EQ(full, samples);
  const SamplerCounters c = sampler.counters();
  EXPECT_GE(c.blocked_unwinds, 1u);
  EXPECT_LE(c.blocked_unwinds, 3u);
  EXPECT_GE(c.blocked_reused, static_cast<uint64_t>(samples) - c.blocked_unwinds);
  EXPECT_EQ(g_eintr.load(), 0);
}

// Without blocked-stack unwinding too: a thread blocked in read() for the whole run is read in
// full once (stat, classification, leaf), and every later sample repeats that one while its CPU
// time does not move. The repeated samples carry the same state and leaf.
TEST(SamplerTest, BlockedThreadThatDoesNotRunRepeatsItsSample) {
  RingPool pool;
  ASSERT_TRUE(pool.Init(4 << 20, 64 * 1024));
  StackCapturer stacks;
  std::string note;
  stacks.Init(StackMode::kUnwind, &note);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::atomic<uint64_t> tid{0};
  std::thread reader([&] {
    ThreadRing* ring = pool.Claim();
    ring->tid = Tid();
    pool.Publish(ring);
    tid = ring->tid;
    ReadOneByte(fds[0]);
  });
  while (tid.load() == 0) usleep(100);
  usleep(20000);  // inside read()

  Sampler sampler(&pool, &stacks, nullptr);
  SamplerOptions options;
  options.hz = 200;
  options.blocked_stacks = false;
  ASSERT_TRUE(sampler.Start(options, &note)) << note;
  usleep(500000);
  sampler.Stop();
  ASSERT_EQ(write(fds[1], "x", 1), 1);
  reader.join();
  close(fds[0]);
  close(fds[1]);

  FakeBuilder builder;
  sampler.DrainInto(&builder);
  int samples = 0, others = 0;
  std::map<uint64_t, int> leaves;  // leaf PC -> samples
  for (const pb::SampleBatch& batch : builder.c.samples()) {
    std::vector<trace::SampleRecord> records;
    std::string error;
    ASSERT_TRUE(trace::DecodeSampleBatch(batch, &records, &error)) << error;
    for (const auto& r : records) {
      if (r.thread_id != tid.load()) continue;
      if (r.state != pb::THREAD_STATE_IO_WAIT) {
        ++others;
        continue;
      }
      ++samples;
      ASSERT_NE(r.stack, 0u);
      const StackView& v = builder.stacks[r.stack];
      ASSERT_EQ(v.pc_count, 1);  // the leaf only: GS_BLOCKED_STACKS=0
      ++leaves[v.pcs[0]];
    }
  }
  EXPECT_GE(samples, 50);
  EXPECT_EQ(others, 0);
  EXPECT_EQ(leaves.size(), 1u);  // the one leaf (libc's read), every time
  const SamplerCounters c = sampler.counters();
  EXPECT_EQ(c.blocked_unwinds, 0u);
  EXPECT_GE(c.blocked_repeated, static_cast<uint64_t>(samples) - 1);
}

}  // namespace
}  // namespace gs
