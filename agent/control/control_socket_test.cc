// control_socket_test.cc — the listener: who may talk to it, what it answers, timed windows.
#include "agent/control/control_socket.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "agent/core/clock.h"

namespace gs {
namespace control {
namespace {

// Counts calls; "recording" between a successful start and stop, whose times it keeps.
class FakeWindows final : public WindowController {
 public:
  bool StartWindow(std::string* facts, std::string* error) override {
    ++starts;
    if (recording) {
      *error = "already recording";
      return false;
    }
    if (refuse) {
      *error = "profiling is finished in this process";
      return false;
    }
    recording = true;
    {
      std::lock_guard<std::mutex> lock(mu);
      opened_ns.push_back(SystemMonotonicNs());
    }
    *facts = "window=" + std::to_string(starts.load()) + " trace=/t.window-1.gstrace";
    return true;
  }
  bool StopWindow(std::string* facts, std::string* error) override {
    ++stops;
    if (!recording) {
      *error = "no capture window is recording";
      return false;
    }
    recording = false;
    {
      std::lock_guard<std::mutex> lock(mu);
      closed_ns.push_back(SystemMonotonicNs());
    }
    *facts = "window=1 trace=/t.window-1.gstrace";
    return true;
  }
  std::string Status() override { return recording ? "state=recording" : "state=standby"; }
  std::atomic<int> starts{0}, stops{0};
  std::atomic<bool> recording{false};
  std::atomic<bool> refuse{false};  // a start fails as it does once the agent has finished
  std::mutex mu;
  std::vector<uint64_t> opened_ns, closed_ns;  // successful starts and stops
};

// Waits up to 5 s for `done`.
template <typename Done>
bool WaitFor(Done done) {
  for (int i = 0; i < 5000; ++i) {
    if (done()) return true;
    usleep(1000);
  }
  return done();
}

const char kIdentity[] = "pid=42 job=j1 rank=3 local_rank=- command=python train.py --x";

// Sends `request` on one end of a socketpair, serves the other end, returns the reply line.
std::string Exchange(const std::string& request, uid_t allowed, WindowController& controller,
                     Served* served = nullptr) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return "socketpair failed";
  if (!request.empty() && write(fds[0], request.data(), request.size()) != static_cast<ssize_t>(request.size()))
    return "write failed";
  shutdown(fds[0], SHUT_WR);
  const Served s = ServeConnection(fds[1], allowed, controller, kIdentity);
  if (served != nullptr) *served = s;
  close(fds[1]);
  std::string reply;
  char buffer[512];
  ssize_t n;
  while ((n = read(fds[0], buffer, sizeof(buffer))) > 0) reply.append(buffer, static_cast<size_t>(n));
  close(fds[0]);
  return reply;
}

TEST(ControlSocketTest, PeerUidIsTheKernelsWord) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  uid_t uid = 12345;
  ASSERT_TRUE(PeerUid(fds[1], &uid));
  EXPECT_EQ(uid, geteuid());
  close(fds[0]);
  close(fds[1]);
}

TEST(ControlSocketTest, AnotherUidIsRefusedBeforeAnythingRuns) {
  // The seam: the peer (this process) is not the uid the listener allows.
  FakeWindows windows;
  const uid_t other = geteuid() + 1;
  for (const char* request : {"status\n", "start\n", "stop\n"}) {
    const std::string reply = Exchange(request, other, windows);
    EXPECT_EQ(reply.rfind("error permission denied: uid " + std::to_string(geteuid()), 0), 0u) << reply;
  }
  EXPECT_EQ(windows.starts, 0);
  EXPECT_EQ(windows.stops, 0);
}

TEST(ControlSocketTest, StatusStartStopForTheOwner) {
  FakeWindows windows;
  const uid_t me = geteuid();
  EXPECT_EQ(Exchange("status\n", me, windows),
            "ok pid=42 state=standby job=j1 rank=3 local_rank=- command=python train.py --x\n");
  Served served;
  EXPECT_EQ(Exchange("start 5000\n", me, windows, &served),
            "ok window=1 trace=/t.window-1.gstrace duration_ns=5000\n");
  EXPECT_TRUE(served.started);
  EXPECT_EQ(served.duration_ns, 5000u);
  EXPECT_EQ(Exchange("start\n", me, windows), "error already recording\n");
  EXPECT_EQ(Exchange("stop\n", me, windows, &served), "ok window=1 trace=/t.window-1.gstrace\n");
  EXPECT_TRUE(served.stopped);
  EXPECT_EQ(Exchange("stop\n", me, windows), "error no capture window is recording\n");
}

TEST(ControlSocketTest, BadRequestsGetAnErrorLine) {
  FakeWindows windows;
  EXPECT_EQ(Exchange("launch\n", geteuid(), windows).rfind("error unknown request 'launch'", 0), 0u);
  EXPECT_EQ(Exchange(std::string(600, 'x'), geteuid(), windows).rfind("error no request line", 0), 0u);
  EXPECT_EQ(Exchange("", geteuid(), windows).rfind("error no request line", 0), 0u);
  EXPECT_EQ(windows.starts, 0);
}

class ListenerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gs_listener_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    options_.folder = base_ + "/gpustall-" + std::to_string(geteuid());
    options_.uid = geteuid();
    options_.pid = getpid();
    options_.identity = kIdentity;
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + base_ + "'";
    ASSERT_EQ(system(cmd.c_str()), 0);
  }
  std::string Request(const std::string& path, const std::string& request) {
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    snprintf(address.sun_path, sizeof(address.sun_path), "%s", path.c_str());
    if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
      close(fd);
      return "connect failed";
    }
    if (write(fd, request.data(), request.size()) < 0) return "write failed";
    std::string reply;
    char buffer[512];
    ssize_t n;
    while ((n = read(fd, buffer, sizeof(buffer))) > 0) reply.append(buffer, static_cast<size_t>(n));
    close(fd);
    return reply;
  }
  std::string base_;
  ControlListener::Options options_;
};

TEST_F(ListenerTest, ServesOnItsPidSocketAndRemovesItOnStop) {
  FakeWindows windows;
  ControlListener listener;
  std::string error;
  ASSERT_TRUE(listener.Start(options_, &windows, &error)) << error;
  EXPECT_EQ(listener.socket_path(), options_.folder + "/" + std::to_string(getpid()) + ".sock");
  struct stat st;
  ASSERT_EQ(lstat(listener.socket_path().c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0077, 0u);
  EXPECT_EQ(Request(listener.socket_path(), "status\n").rfind("ok pid=42 state=standby", 0), 0u);
  listener.Stop();
  EXPECT_NE(lstat(listener.socket_path().c_str(), &st), 0) << "socket left behind";
}

TEST_F(ListenerTest, ATimedWindowIsStoppedByTheListener) {
  FakeWindows windows;
  ControlListener listener;
  std::string error;
  ASSERT_TRUE(listener.Start(options_, &windows, &error)) << error;
  EXPECT_EQ(Request(listener.socket_path(), "start 50000000\n").rfind("ok window=1", 0), 0u);
  EXPECT_TRUE(WaitFor([&] { return !windows.recording; })) << "the 50 ms window was not stopped within 5 s";
  EXPECT_EQ(windows.stops, 1);
  // An untimed window stays until stop.
  EXPECT_EQ(Request(listener.socket_path(), "start\n").rfind("ok window=", 0), 0u);
  usleep(100000);
  EXPECT_TRUE(windows.recording);
  EXPECT_EQ(Request(listener.socket_path(), "stop\n").rfind("ok window=", 0), 0u);
  listener.Stop();
}

TEST_F(ListenerTest, PeriodicWindowsOpenAtOnceThenEveryPeriodAndCloseAfterTheirLength) {
  constexpr uint64_t kPeriodNs = 200'000'000, kWindowNs = 50'000'000;
  options_.periodic_ns = kPeriodNs;
  options_.periodic_window_ns = kWindowNs;
  FakeWindows windows;
  ControlListener listener;
  std::string error;
  const uint64_t started = SystemMonotonicNs();
  ASSERT_TRUE(listener.Start(options_, &windows, &error)) << error;
  ASSERT_TRUE(WaitFor([&] { return windows.stops >= 3; })) << "three windows did not end within 5 s";
  listener.Stop();
  std::lock_guard<std::mutex> lock(windows.mu);
  ASSERT_GE(windows.closed_ns.size(), 3u);
  ASSERT_GE(windows.opened_ns.size(), windows.closed_ns.size());
  // The first at once (well before a period has passed, even on a loaded machine).
  EXPECT_LT(windows.opened_ns[0] - started, kPeriodNs);
  for (size_t i = 0; i < 3; ++i) {
    // Its length counts from the listener's clock reading before the start (1 ms: ample margin).
    EXPECT_GE(windows.closed_ns[i] - windows.opened_ns[i] + 1'000'000, kWindowNs)
        << "window " << i + 1 << " ended early";
    // Each window ends before the next begins (it is stopped, not left to the next start).
    if (i + 1 < windows.opened_ns.size()) {
      EXPECT_LT(windows.closed_ns[i], windows.opened_ns[i + 1]);
    }
    // Starts follow the period from the first one, never early (poll's timeout rounds up).
    if (i > 0) {
      EXPECT_GE(windows.opened_ns[i] - windows.opened_ns[0], i * kPeriodNs) << "window " << i + 1;
    }
  }
}

TEST_F(ListenerTest, APeriodicStartSkipsAPeriodWhileGsctlsWindowRecords) {
  options_.periodic_ns = 100'000'000;
  options_.periodic_window_ns = 20'000'000;
  FakeWindows windows;
  ControlListener listener;
  std::string error;
  ASSERT_TRUE(listener.Start(options_, &windows, &error)) << error;
  ASSERT_TRUE(WaitFor([&] { return windows.stops >= 1; }));
  // An untimed window from gsctl: the periodic starts meanwhile are refused, and it goes on.
  ASSERT_EQ(Request(listener.socket_path(), "start\n").rfind("ok window=", 0), 0u);
  const int starts = windows.starts;
  ASSERT_TRUE(WaitFor([&] { return windows.starts >= starts + 2; })) << "no periodic start came";
  EXPECT_TRUE(windows.recording) << "the periodic schedule stopped gsctl's window";
  EXPECT_EQ(windows.stops, 1);
  // Stopped by gsctl: the schedule resumes with the next period.
  ASSERT_EQ(Request(listener.socket_path(), "stop\n").rfind("ok window=", 0), 0u);
  EXPECT_TRUE(WaitFor([&] { return windows.stops >= 3; })) << "the schedule did not resume";
  listener.Stop();
}

TEST_F(ListenerTest, APeriodicStartRefusedForAnotherReasonEndsTheSchedule) {
  options_.periodic_ns = 20'000'000;
  options_.periodic_window_ns = 5'000'000;
  FakeWindows windows;
  windows.refuse = true;
  ControlListener listener;
  std::string error;
  ASSERT_TRUE(listener.Start(options_, &windows, &error)) << error;
  ASSERT_TRUE(WaitFor([&] { return windows.starts >= 1; }));
  usleep(200000);  // ten periods
  EXPECT_EQ(windows.starts, 1) << "the schedule went on asking a finished agent";
  // gsctl is still served.
  EXPECT_EQ(Request(listener.socket_path(), "status\n").rfind("ok pid=42 state=standby", 0), 0u);
  listener.Stop();
}

TEST_F(ListenerTest, RefusesABadRunFolderAndLeavesNothingBehind) {
  ASSERT_EQ(mkdir(options_.folder.c_str(), 0755), 0);
  ASSERT_EQ(chmod(options_.folder.c_str(), 0755), 0);
  FakeWindows windows;
  ControlListener listener;
  std::string error;
  EXPECT_FALSE(listener.Start(options_, &windows, &error));
  EXPECT_NE(error.find("expected 0700"), std::string::npos) << error;
  const std::string socket = options_.folder + "/" + std::to_string(getpid()) + ".sock";
  struct stat st;
  EXPECT_NE(lstat(socket.c_str(), &st), 0);
}

TEST_F(ListenerTest, ForkedChildDoesNotRemoveTheParentsSocket) {
  FakeWindows windows;
  ControlListener listener;
  std::string error;
  ASSERT_TRUE(listener.Start(options_, &windows, &error)) << error;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    listener.OnForkChild();
    listener.RemoveSocket();  // what the inherited atexit path does
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  struct stat st;
  EXPECT_EQ(lstat(listener.socket_path().c_str(), &st), 0) << "the child removed the parent's socket";
  EXPECT_EQ(Request(listener.socket_path(), "status\n").rfind("ok pid=", 0), 0u);
  listener.Stop();
}

}  // namespace
}  // namespace control
}  // namespace gs
