#include "agent/sampler/wait_classifier.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <map>

#include "agent/sampler/proc_fd_source.h"
#include "gtest/gtest.h"

namespace gs {
namespace {

namespace pb = gpustall::trace;

class FakeFds : public FdSource {
 public:
  std::map<int, FdKind> kinds;
  int waited_count = 0;  // -1: unreadable
  int waited[8] = {};
  FdKind KindOf(int fd) override { return kinds.count(fd) ? kinds[fd] : FdKind::kUnknown; }
  int WaitedFds(const TaskSyscall&, int* fds, int max) override {
    for (int i = 0; i < waited_count && i < max; ++i) fds[i] = waited[i];
    return waited_count;
  }
};

TaskStat State(char c) {
  TaskStat s;
  s.state = c;
  return s;
}

TaskSyscall Call(long nr, uint64_t a0 = 0, uint64_t a1 = 0) {
  TaskSyscall c;
  c.kind = TaskSyscall::kInSyscall;
  c.nr = nr;
  c.args[0] = a0;
  c.args[1] = a1;
  return c;
}

pb::ThreadState Classify(char state, const TaskSyscall& call, FakeFds* fds) {
  return ClassifyTask(State(state), call, fds).state;
}

TEST(WaitClassifierTest, RunningAndDiskWaitComeFromStat) {
  FakeFds fds;
  EXPECT_EQ(Classify('R', TaskSyscall(), &fds), pb::THREAD_STATE_RUNNING);
  EXPECT_EQ(Classify('D', Call(SYS_read, 3), &fds), pb::THREAD_STATE_IO_WAIT);
  EXPECT_EQ(Classify('Z', TaskSyscall(), &fds), pb::THREAD_STATE_UNKNOWN);
}

TEST(WaitClassifierTest, ReadsAreIoWaitUnlessOnAnEventFdOrTimerFd) {
  FakeFds fds;
  fds.kinds = {{3, FdKind::kPipe}, {4, FdKind::kEventFd}, {5, FdKind::kTimerFd}};
  EXPECT_EQ(Classify('S', Call(SYS_read, 3), &fds), pb::THREAD_STATE_IO_WAIT);
  EXPECT_EQ(Classify('S', Call(SYS_readv, 3), &fds), pb::THREAD_STATE_IO_WAIT);
  EXPECT_EQ(Classify('S', Call(SYS_recvfrom, 9), &fds), pb::THREAD_STATE_IO_WAIT);
  EXPECT_EQ(Classify('S', Call(SYS_pread64, 9), &fds), pb::THREAD_STATE_IO_WAIT);
  EXPECT_EQ(Classify('S', Call(SYS_recvmsg, 9), &fds), pb::THREAD_STATE_IO_WAIT);
  EXPECT_EQ(Classify('S', Call(SYS_read, 4), &fds), pb::THREAD_STATE_LOCK_WAIT);
  EXPECT_EQ(Classify('S', Call(SYS_read, 5), &fds), pb::THREAD_STATE_IDLE);
}

TEST(WaitClassifierTest, FutexIsLockWaitAndSleepsAreIdle) {
  FakeFds fds;
  EXPECT_EQ(Classify('S', Call(SYS_futex), &fds), pb::THREAD_STATE_LOCK_WAIT);
  EXPECT_EQ(Classify('S', Call(SYS_nanosleep), &fds), pb::THREAD_STATE_IDLE);
  EXPECT_EQ(Classify('S', Call(SYS_clock_nanosleep), &fds), pb::THREAD_STATE_IDLE);
  EXPECT_EQ(Classify('S', Call(SYS_wait4), &fds), pb::THREAD_STATE_SLEEPING);
  EXPECT_EQ(Classify('S', Call(SYS_getpid), &fds), pb::THREAD_STATE_SLEEPING);
}

TEST(WaitClassifierTest, PollFamilyGoesByTheFilesWaitedOn) {
  FakeFds fds;
  fds.kinds = {{3, FdKind::kPipe}, {4, FdKind::kEventFd}, {5, FdKind::kTimerFd}, {6, FdKind::kSocket}};
  const long calls[] = {SYS_ppoll, SYS_pselect6, SYS_epoll_pwait, SYS_poll, SYS_select, SYS_epoll_wait};
  for (long nr : calls) {
    SCOPED_TRACE(nr);
    EXPECT_TRUE(IsPollFamily(nr));
    fds.waited_count = 2;
    fds.waited[0] = 4;
    fds.waited[1] = 6;
    EXPECT_EQ(Classify('S', Call(nr), &fds), pb::THREAD_STATE_IO_WAIT);
    fds.waited_count = 1;
    fds.waited[0] = 4;
    EXPECT_EQ(Classify('S', Call(nr), &fds), pb::THREAD_STATE_LOCK_WAIT);
    fds.waited[0] = 5;
    EXPECT_EQ(Classify('S', Call(nr), &fds), pb::THREAD_STATE_IDLE);
    fds.waited_count = 0;  // select(0, ...): Python < 3.11's time.sleep
    EXPECT_EQ(Classify('S', Call(nr), &fds), pb::THREAD_STATE_IDLE);
    fds.waited_count = -1;
    const WaitVerdict v = ClassifyTask(State('S'), Call(nr), &fds);
    EXPECT_EQ(v.state, pb::THREAD_STATE_SLEEPING);
    EXPECT_NE(std::string(v.reason).find("could not be read"), std::string::npos);
  }
}

TEST(WaitClassifierTest, NotInASyscall) {
  FakeFds fds;
  TaskSyscall c;
  c.kind = TaskSyscall::kRunning;
  EXPECT_EQ(Classify('S', c, &fds), pb::THREAD_STATE_RUNNING);
  c.kind = TaskSyscall::kNoSyscall;
  EXPECT_EQ(Classify('S', c, &fds), pb::THREAD_STATE_SLEEPING);
}

TEST(WaitClassifierTest, LinkTargets) {
  EXPECT_EQ(FdKindFromLink("pipe:[1234]"), FdKind::kPipe);
  EXPECT_EQ(FdKindFromLink("socket:[99]"), FdKind::kSocket);
  EXPECT_EQ(FdKindFromLink("anon_inode:[eventfd]"), FdKind::kEventFd);
  EXPECT_EQ(FdKindFromLink("anon_inode:[timerfd]"), FdKind::kTimerFd);
  EXPECT_EQ(FdKindFromLink("anon_inode:[eventpoll]"), FdKind::kEpoll);
  EXPECT_EQ(FdKindFromLink("/data/shard-0.bin"), FdKind::kFile);
  EXPECT_EQ(FdKindFromLink("/dev/pts/3"), FdKind::kCharDevice);
  EXPECT_EQ(FdKindFromLink(""), FdKind::kUnknown);
}

TEST(ProcFdSourceTest, KindsOfRealFiles) {
  int p[2], s[2];
  ASSERT_EQ(pipe(p), 0);
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
  const int e = eventfd(0, 0);
  const int t = timerfd_create(CLOCK_MONOTONIC, 0);
  ProcFdSource source;
  source.BeginTick();
  EXPECT_EQ(source.KindOf(p[0]), FdKind::kPipe);
  EXPECT_EQ(source.KindOf(s[0]), FdKind::kSocket);
  EXPECT_EQ(source.KindOf(e), FdKind::kEventFd);
  EXPECT_EQ(source.KindOf(t), FdKind::kTimerFd);
  EXPECT_EQ(source.KindOf(9999), FdKind::kUnknown);
  // Cached within a tick, re-read after BeginTick (fd numbers are reused).
  close(e);
  EXPECT_EQ(source.KindOf(e), FdKind::kEventFd);
  ASSERT_EQ(dup2(p[1], e), e);
  source.BeginTick();
  EXPECT_EQ(source.KindOf(e), FdKind::kPipe);
  for (int fd : {p[0], p[1], s[0], s[1], t, e}) close(fd);
}

// A named FIFO is a pipe (its mode says so; its /proc/self/fd link is a path, like a file's).
TEST(ProcFdSourceTest, NamedFifoIsAPipe) {
  char path[] = "/tmp/gs_fifo_XXXXXX";
  const int placeholder = mkstemp(path);
  ASSERT_GE(placeholder, 0);
  close(placeholder);
  unlink(path);
  ASSERT_EQ(mkfifo(path, 0600), 0);
  const int fd = open(path, O_RDWR | O_NONBLOCK);  // O_RDWR: no wait for a writer
  ASSERT_GE(fd, 0);
  ProcFdSource source;
  source.BeginTick();
  EXPECT_EQ(source.KindOf(fd), FdKind::kPipe);
  close(fd);
  unlink(path);
}

TEST(ProcFdSourceTest, WaitedFdsOfPollSelectAndEpollArguments) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  ProcFdSource source;
  pollfd entries[2] = {{p[0], POLLIN, 0}, {-1, POLLIN, 0}};
  TaskSyscall c = Call(SYS_ppoll, reinterpret_cast<uint64_t>(entries), 2);
  int fds[8];
  ASSERT_EQ(source.WaitedFds(c, fds, 8), 1);
  EXPECT_EQ(fds[0], p[0]);
  fd_set set;
  FD_ZERO(&set);
  FD_SET(p[0], &set);
  c = Call(SYS_pselect6, static_cast<uint64_t>(p[0] + 1), reinterpret_cast<uint64_t>(&set));
  ASSERT_EQ(source.WaitedFds(c, fds, 8), 1);
  EXPECT_EQ(fds[0], p[0]);
  c = Call(SYS_pselect6, 0);
  EXPECT_EQ(source.WaitedFds(c, fds, 8), 0);
  c = Call(SYS_ppoll, 16, 1);  // an unmapped array: unreadable, not a crash
  EXPECT_EQ(source.WaitedFds(c, fds, 8), -1);
  for (int fd : {p[0], p[1]}) close(fd);
}

}  // namespace
}  // namespace gs
