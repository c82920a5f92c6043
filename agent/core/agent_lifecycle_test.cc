// The Agent's lifecycle, each case in a forked child (the Agent is one per process, and exit,
// exec and fork are what is being tested). The child reports through its exit status, its stderr
// (captured to a file) and the trace it writes; the parent checks them.
#include "agent/core/agent.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <algorithm>
#include <functional>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "agent/core/agent_parts.h"
#include "analyzer/reader/trace_reader.h"

namespace gs {
namespace {

namespace pb = gpustall::trace;
using ::testing::HasSubstr;

// --- a capture source that leaves evidence in the trace ---
std::atomic<int> g_factory_calls{0};
std::atomic<int> g_fork_child_calls{0};

class FakeSource : public CaptureSource {
 public:
  bool Start(Recorder& recorder) override {
    recorder_ = &recorder;
    recorder.SetCaptureMode("cupti", "fake source");
    return true;
  }
  void Flush(bool forced) override {
    // A forced flush (exit/exec) hands over one last record: it must reach the file.
    if (forced && recorder_ != nullptr && !stopped_) {
      GpuActivityEvent a{};
      a.start_ns = 1;
      a.end_ns = 2;
      a.kind = ActivityKind::kKernel;
      a.source = ActivitySource::kCupti;
      a.name = "flushed_at_the_end";
      recorder_->RecordGpuActivity(a);
    }
  }
  void Stop() override { stopped_ = true; }
  void OnForkChild() override { g_fork_child_calls.fetch_add(1); }
  uint32_t TakeCorrelationId() override { return 0; }
  bool wants_event_pairs() const override { return false; }
  void BeforeGpuWork(uint64_t) override {}
  void AfterGpuWork(uint64_t, uint32_t, const ApiCallEvent&, const KernelLaunchShape*) override {}

 private:
  Recorder* recorder_ = nullptr;
  bool stopped_ = false;
};

CaptureSource* MakeFakeSource(const Config&) {
  g_factory_calls.fetch_add(1);
  return new FakeSource();
}

const char* Names(ApiSource, uint16_t id) { return id == 1 ? "cudaMemcpy" : nullptr; }

ApiCallEvent Call() {
  ApiCallEvent e{};
  e.enter_ns = 10;
  e.exit_ns = 20;
  e.api_id = 1;
  e.source = ApiSource::kInterposer;
  e.api_class = ApiClass::kMemcpy;
  return e;
}

struct ChildResult {
  int exit_code = -1;
  std::string stderr_text;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class AgentLifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/gs_agent_lifecycle_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { ASSERT_EQ(system(("rm -rf " + dir_).c_str()), 0); }

  // Runs `body` in a forked child with GS_OUTPUT=<dir>/t-%p.gstrace and `env` set; the child's
  // exit code is body's return value (after exit(), so atexit handlers run).
  ChildResult RunChild(std::vector<std::pair<std::string, std::string>> env, std::function<int()> body) {
    const std::string err_path = dir_ + "/stderr.txt";
    const pid_t pid = fork();
    if (pid == 0) {
      FILE* err = freopen(err_path.c_str(), "w", stderr);
      if (err == nullptr) _exit(99);
      setenv("GS_OUTPUT", (dir_ + "/t-%p.gstrace").c_str(), 1);
      for (auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
      AgentSetCaptureSourceFactory(&MakeFakeSource);
      AgentSetApiNameFunction(&Names);
      exit(body());
    }
    ChildResult result;
    int status = 0;
    waitpid(pid, &status, 0);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    result.stderr_text = ReadFile(err_path);
    unlink(err_path.c_str());
    return result;
  }

  std::vector<std::string> Traces() {
    std::vector<std::string> out;
    const std::string listing = dir_ + "/listing.txt";
    if (system(("ls " + dir_ + " | grep gstrace > " + listing + " || true").c_str()) != 0) return out;
    std::istringstream in(ReadFile(listing));
    for (std::string line; std::getline(in, line);) out.push_back(dir_ + "/" + line);
    unlink(listing.c_str());
    return out;
  }

  std::string dir_;
};

TEST_F(AgentLifecycleTest, BadValueDisablesWithOneLineAndTheAppGoesOn) {
  const ChildResult r = RunChild({{"GS_STACK_DEPTH", "abc"}}, [] {
    errno = 1234;
    if (AgentRecorder() != nullptr) return 1;
    if (errno != 1234) return 2;  // errno untouched
    if (AgentInitializeInjection() != 1) return 3;
    if (AgentCurrentState() != AgentState::kDisabled) return 4;
    return 0;
  });
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stderr_text, "gpustall: GS_STACK_DEPTH=\"abc\": expected an integer 1..128; profiling disabled\n");
  EXPECT_TRUE(Traces().empty());
}

TEST_F(AgentLifecycleTest, OffSwitchMeansNoFileNoMessage) {
  const ChildResult r = RunChild({{"GS_DISABLE", "1"}}, [] { return AgentRecorder() == nullptr ? 0 : 1; });
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stderr_text, "");
  EXPECT_TRUE(Traces().empty());
}

TEST_F(AgentLifecycleTest, DormantUntilFirstUse) {
  const ChildResult r = RunChild({}, [] { return AgentCurrentState() == AgentState::kDormant ? 0 : 1; });
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(Traces().empty());
}

TEST_F(AgentLifecycleTest, AWindowNotShorterThanItsPeriodRecordsContinuouslyAndSaysSo) {
  const ChildResult r = RunChild({{"GS_PERIODIC_MS", "500"}, {"GS_PERIODIC_WINDOW_MS", "500"}}, [] {
    if (AgentRecorder() == nullptr) return 1;  // active at once: no windows, no standby
    return AgentCurrentState() == AgentState::kActive ? 0 : 2;
  });
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stderr_text,
            "gpustall: GS_PERIODIC_WINDOW_MS=500 is not shorter than GS_PERIODIC_MS=500: recording continuously\n");
  EXPECT_EQ(Traces().size(), 1u);
}

TEST_F(AgentLifecycleTest, UncreatableOutputDisablesWithOneLine) {
  const ChildResult r = RunChild({{"GS_OUTPUT", "/nonexistent-gs-dir/x.gstrace"}},
                                 [] { return AgentRecorder() == nullptr ? 0 : 1; });
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stderr_text,
            "gpustall: cannot create trace file /nonexistent-gs-dir/x.gstrace: No such file or directory; "
            "profiling disabled\n");
}

TEST_F(AgentLifecycleTest, WriteErrorWhileRecordingDisablesOnceAndTheAppGoesOn) {
  const ChildResult r = RunChild({{"GS_FLUSH_MS", "10"}}, [] {
    // A file size limit the header fits under and the recording does not (like a full disk).
    signal(SIGXFSZ, SIG_IGN);
    rlimit limit{64 * 1024, 64 * 1024};
    setrlimit(RLIMIT_FSIZE, &limit);
    Recorder* recorder = AgentRecorder();
    if (recorder == nullptr) return 1;
    for (int i = 0; i < 400 && AgentCurrentState() == AgentState::kActive; ++i) {
      for (int k = 0; k < 200; ++k) {
        ApiCallEvent e = Call();
        e.enter_ns = static_cast<uint64_t>(i) * 1000003 + k * 7919;  // incompressible-ish
        e.bytes = e.enter_ns * 2654435761u;
        recorder->RecordApiCall(e, true, 0);
      }
      usleep(2000);
    }
    if (AgentCurrentState() != AgentState::kDisabled) return 2;
    if (AgentRecorder() != nullptr) return 3;
    return 0;
  });
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_THAT(r.stderr_text,
              HasSubstr("write failed: File too large (RLIMIT_FSIZE is 65536 bytes); profiling disabled\n"));
  EXPECT_EQ(std::count(r.stderr_text.begin(), r.stderr_text.end(), '\n'), 1) << r.stderr_text;
}

struct TraceSummary {
  int64_t pid = 0;
  size_t calls = 0;
  std::vector<std::string> activity_names;
  std::string mode, detail;
  pb::EndReason end = pb::END_REASON_UNSPECIFIED;
  size_t threads = 0;
};

TraceSummary Summarize(const std::string& path) {
  TraceSummary s;
  auto reader = reader::TraceReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return s;
  reader::ChunkEvents events;
  std::set<uint64_t> tids;
  while (true) {
    auto more = (*reader)->Next(&events);
    if (!more.ok() || !*more) break;
    s.calls += events.api_calls.size();
    for (const auto& c : events.api_calls) tids.insert(c.thread_id);
    for (const auto& a : events.activities) s.activity_names.push_back((*reader)->tables().string(a.name));
  }
  s.pid = (*reader)->header().pid();
  s.mode = (*reader)->capture().mode_text();
  s.detail = (*reader)->capture().detail();
  if ((*reader)->end() != nullptr) s.end = (*reader)->end()->reason();
  s.threads = tids.size();
  return s;
}

TEST_F(AgentLifecycleTest, EightThreadsActivateOnceAndExitWritesEverything) {
  const ChildResult r = RunChild({}, [] {
    std::atomic<Recorder*> seen[8];
    std::vector<std::thread> threads;
    std::atomic<bool> go{false};
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        while (!go.load()) {
        }
        Recorder* recorder = AgentRecorder();
        seen[t].store(recorder);
        if (recorder == nullptr) return;
        for (int i = 0; i < 1000; ++i) recorder->RecordApiCall(Call(), true, 0);
      });
    }
    go.store(true);
    for (auto& th : threads) th.join();
    for (int t = 0; t < 8; ++t)
      if (seen[t].load() == nullptr || seen[t].load() != seen[0].load()) return 1;
    if (g_factory_calls.load() != 1) return 2;
    return 0;  // exit() flushes
  });
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(r.stderr_text, "");
  const auto traces = Traces();
  ASSERT_EQ(traces.size(), 1u);
  const TraceSummary s = Summarize(traces[0]);
  EXPECT_EQ(s.calls, 8000u);
  EXPECT_EQ(s.threads, 8u);
  EXPECT_EQ(s.mode, "cupti");
  EXPECT_EQ(s.detail, "fake source");
  EXPECT_EQ(s.activity_names, std::vector<std::string>{"flushed_at_the_end"});
  EXPECT_EQ(s.end, pb::END_REASON_EXIT);
}

TEST_F(AgentLifecycleTest, ForkedChildWritesItsOwnFileWithoutTheCaptureSource) {
  const ChildResult r = RunChild({}, [] {
    Recorder* recorder = AgentRecorder();
    if (recorder == nullptr) return 1;
    recorder->RecordApiCall(Call(), false, 0);
    const pid_t child = fork();
    if (child == 0) {
      if (AgentCurrentState() != AgentState::kDormant) _exit(10);
      if (g_fork_child_calls.load() != 1) _exit(11);
      Recorder* again = AgentRecorder();
      if (again == nullptr) _exit(12);
      for (int i = 0; i < 3; ++i) again->RecordApiCall(Call(), false, 0);
      if (g_factory_calls.load() != 1) _exit(13);  // no new CaptureSource in the child
      exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 20 + (WIFEXITED(status) ? WEXITSTATUS(status) : 99);
    recorder->RecordApiCall(Call(), false, 0);
    return 0;
  });
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  const auto traces = Traces();
  ASSERT_EQ(traces.size(), 2u);
  TraceSummary a = Summarize(traces[0]), b = Summarize(traces[1]);
  if (a.calls != 2) std::swap(a, b);
  EXPECT_EQ(a.calls, 2u);  // parent: before and after the fork
  EXPECT_EQ(a.mode, "cupti");
  EXPECT_EQ(b.calls, 3u);  // child
  EXPECT_NE(a.pid, b.pid);
  EXPECT_EQ(b.mode, "interposition");
  EXPECT_THAT(b.detail, HasSubstr("forked child"));
  EXPECT_EQ(a.end, pb::END_REASON_EXIT);
  EXPECT_EQ(b.end, pb::END_REASON_EXIT);
}

// The writer thread holds writer_mu across a whole drain and chunk write (a slow disk, a large
// library to symbolize: hundreds of milliseconds). Here another thread holds it for a second, as
// such a writer would: fork() must not wait for it (a DataLoader forks its workers), and the
// parent's trace goes on once the lock is free.
TEST_F(AgentLifecycleTest, ForkDoesNotWaitForTheWriterLock) {
  const ChildResult r = RunChild({}, [] {
    Recorder* recorder = AgentRecorder();
    if (recorder == nullptr) return 1;
    recorder->RecordApiCall(Call(), false, 0);
    core::AgentParts* parts = core::g_parts.load();
    if (parts == nullptr) return 2;
    std::atomic<bool> held{false};
    std::thread holder([&] {
      parts->writer_mu.Lock();
      held.store(true);
      std::this_thread::sleep_for(std::chrono::milliseconds(1000));
      parts->writer_mu.Unlock();
    });
    while (!held.load()) std::this_thread::yield();
    const auto start = std::chrono::steady_clock::now();
    const pid_t child = fork();
    if (child == 0) _exit(AgentCurrentState() == AgentState::kDormant ? 0 : 10);
    const auto fork_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    holder.join();
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 20;
    // Blocking would take the whole second; a fork on a loaded machine takes milliseconds.
    if (fork_ms >= 200) {
      fprintf(stderr, "fork took %lld ms while writer_mu was held\n", static_cast<long long>(fork_ms));
      return 30;
    }
    recorder->RecordApiCall(Call(), false, 0);
    return 0;
  });
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(r.stderr_text, "");
  const auto traces = Traces();
  ASSERT_EQ(traces.size(), 1u);  // the child never recorded
  const TraceSummary s = Summarize(traces[0]);
  EXPECT_EQ(s.calls, 2u);  // before and after the fork
  EXPECT_EQ(s.end, pb::END_REASON_EXIT);
}

TEST_F(AgentLifecycleTest, BeforeExecEndsTheTrace) {
  const ChildResult r = RunChild({}, [] {
    Recorder* recorder = AgentRecorder();
    if (recorder == nullptr) return 1;
    recorder->RecordApiCall(Call(), true, 0);
    AgentBeforeExec();
    if (AgentCurrentState() != AgentState::kFinished) return 2;
    if (AgentRecorder() != nullptr) return 3;
    _exit(0);  // as if exec had replaced the image: no atexit
  });
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  const auto traces = Traces();
  ASSERT_EQ(traces.size(), 1u);
  const TraceSummary s = Summarize(traces[0]);
  EXPECT_EQ(s.calls, 1u);
  EXPECT_EQ(s.end, pb::END_REASON_EXEC);
  EXPECT_EQ(s.activity_names, std::vector<std::string>{"flushed_at_the_end"});
}

}  // namespace
}  // namespace gs
