// control_socket_test.cc — the listener: who may talk to it, what it answers, timed windows.
#include "agent/control/control_socket.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <string>

namespace gs {
namespace control {
namespace {

// Counts calls; "recording" between a successful start and stop.
class FakeWindows final : public WindowController {
 public:
  bool StartWindow(std::string* facts, std::string* error) override {
    ++starts;
    if (recording) {
      *error = "already recording";
      return false;
    }
    recording = true;
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
    *facts = "window=1 trace=/t.window-1.gstrace";
    return true;
  }
  std::string Status() override { return recording ? "state=recording" : "state=standby"; }
  std::atomic<int> starts{0}, stops{0};
  std::atomic<bool> recording{false};
};

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
  for (int i = 0; i < 500 && windows.recording; ++i) usleep(10000);
  EXPECT_FALSE(windows.recording) << "the 50 ms window was not stopped within 5 s";
  EXPECT_EQ(windows.stops, 1);
  // An untimed window stays until stop.
  EXPECT_EQ(Request(listener.socket_path(), "start\n").rfind("ok window=", 0), 0u);
  usleep(100000);
  EXPECT_TRUE(windows.recording);
  EXPECT_EQ(Request(listener.socket_path(), "stop\n").rfind("ok window=", 0), 0u);
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
