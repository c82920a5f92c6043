#include "agent/sampler/wait_classifier.h"

#include <fcntl.h>
#include <sys/syscall.h>

#include <cstring>

namespace gs {
namespace {

namespace pb = gpustall::trace;

bool StartsWith(const char* s, const char* prefix) { return std::strncmp(s, prefix, std::strlen(prefix)) == 0; }

enum class Family : uint8_t { kOther, kRead, kWrite, kLock, kPoll, kSleep, kSignalWait, kChildWait, kAio };

Family FamilyOf(long nr) {
  switch (nr) {
    case SYS_read:
    case SYS_pread64:
    case SYS_readv:
    case SYS_preadv:
    case SYS_preadv2:
    case SYS_recvfrom:
    case SYS_recvmsg:
    case SYS_recvmmsg:
    case SYS_accept:
    case SYS_accept4:
    case SYS_connect:
      return Family::kRead;
    case SYS_write:
    case SYS_pwrite64:
    case SYS_writev:
    case SYS_pwritev:
    case SYS_sendto:
    case SYS_sendmsg:
    case SYS_sendmmsg:
    case SYS_sendfile:
    case SYS_splice:
    case SYS_fsync:
    case SYS_fdatasync:
    case SYS_openat:
      return Family::kWrite;
    case SYS_futex:
#ifdef SYS_futex_waitv
    case SYS_futex_waitv:
#endif
    case SYS_semop:
    case SYS_semtimedop:
    case SYS_msgrcv:
    case SYS_flock:
    case SYS_fcntl:
      return Family::kLock;
#ifdef SYS_poll
    case SYS_poll:
#endif
#ifdef SYS_select
    case SYS_select:
#endif
#ifdef SYS_epoll_wait
    case SYS_epoll_wait:
#endif
    case SYS_ppoll:
    case SYS_pselect6:
    case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
    case SYS_epoll_pwait2:
#endif
      return Family::kPoll;
    case SYS_nanosleep:
    case SYS_clock_nanosleep:
      return Family::kSleep;
#ifdef SYS_pause
    case SYS_pause:
#endif
    case SYS_rt_sigsuspend:
    case SYS_rt_sigtimedwait:
      return Family::kSignalWait;
    case SYS_wait4:
    case SYS_waitid:
      return Family::kChildWait;
    case SYS_io_getevents:
    case SYS_io_pgetevents:
#ifdef SYS_io_uring_enter
    case SYS_io_uring_enter:
#endif
      return Family::kAio;
    default:
      return Family::kOther;
  }
}

WaitVerdict V(pb::ThreadState state, const char* reason) { return WaitVerdict{state, reason}; }

WaitVerdict ClassifyPoll(const TaskSyscall& call, FdSource* fds) {
  int waited[64];
  const int n = fds != nullptr ? fds->WaitedFds(call, waited, 64) : -1;
  if (n < 0) return V(pb::THREAD_STATE_SLEEPING, "poll-family wait: the files waited on could not be read");
  if (n == 0) return V(pb::THREAD_STATE_IDLE, "poll-family wait on no file: a sleep");
  bool io = false, notify = false, timer = false, unknown = false;
  for (int i = 0; i < n; ++i) {
    switch (fds->KindOf(waited[i])) {
      case FdKind::kPipe:
      case FdKind::kSocket:
      case FdKind::kFile:
      case FdKind::kCharDevice:
        io = true;
        break;
      case FdKind::kEventFd:
      case FdKind::kSignalFd:
        notify = true;
        break;
      case FdKind::kTimerFd:
        timer = true;
        break;
      default:
        unknown = true;
        break;
    }
  }
  if (io) return V(pb::THREAD_STATE_IO_WAIT, "poll-family wait on a pipe, socket or file");
  if (notify) return V(pb::THREAD_STATE_LOCK_WAIT, "poll-family wait on an eventfd/signalfd (a wake-up from another thread)");
  if (timer && !unknown) return V(pb::THREAD_STATE_IDLE, "poll-family wait on timerfds only: a sleep");
  return V(pb::THREAD_STATE_SLEEPING, "poll-family wait on files of unknown kind");
}

}  // namespace

FdKind FdKindFromLink(const char* link) {
  if (link == nullptr || link[0] == '\0') return FdKind::kUnknown;
  if (StartsWith(link, "pipe:")) return FdKind::kPipe;
  if (StartsWith(link, "socket:")) return FdKind::kSocket;
  if (StartsWith(link, "anon_inode:")) {
    const char* what = link + 11;
    if (std::strstr(what, "eventfd") != nullptr) return FdKind::kEventFd;
    if (std::strstr(what, "timerfd") != nullptr) return FdKind::kTimerFd;
    if (std::strstr(what, "signalfd") != nullptr) return FdKind::kSignalFd;
    if (std::strstr(what, "eventpoll") != nullptr) return FdKind::kEpoll;
    return FdKind::kOther;
  }
  if (StartsWith(link, "/dev/")) {
    // Block devices read like files; ttys, /dev/null and friends are character devices. Both
    // are input/output waits, so the difference is only for tests and logs.
    return FdKind::kCharDevice;
  }
  if (link[0] == '/') return FdKind::kFile;
  return FdKind::kOther;
}

bool IsPollFamily(long nr) { return FamilyOf(nr) == Family::kPoll; }

WaitVerdict ClassifyTask(const TaskStat& stat, const TaskSyscall& call, FdSource* fds) {
  switch (stat.state) {
    case 'R':
      return V(pb::THREAD_STATE_RUNNING, "running or runnable");
    case 'D':
      return V(pb::THREAD_STATE_IO_WAIT, "uninterruptible sleep (disk or network file system)");
    case 'S':
    case 'I':
      break;
    case 'T':
    case 't':
      return V(pb::THREAD_STATE_SLEEPING, "stopped");
    default:
      return V(pb::THREAD_STATE_UNKNOWN, "exiting or unknown state");
  }
  switch (call.kind) {
    case TaskSyscall::kRunning:
      return V(pb::THREAD_STATE_RUNNING, "woke up between the two reads");
    case TaskSyscall::kNoSyscall:
      return V(pb::THREAD_STATE_SLEEPING, "blocked outside a system call");
    case TaskSyscall::kUnreadable:
      return V(pb::THREAD_STATE_SLEEPING, "sleeping; the syscall file is unreadable");
    case TaskSyscall::kInSyscall:
      break;
  }
  switch (FamilyOf(call.nr)) {
    case Family::kRead: {
      const FdKind kind = fds != nullptr && (call.nr == SYS_read || call.nr == SYS_readv)
                              ? fds->KindOf(static_cast<int>(call.args[0]))
                              : FdKind::kUnknown;
      if (kind == FdKind::kEventFd) return V(pb::THREAD_STATE_LOCK_WAIT, "read on an eventfd (a wake-up from another thread)");
      if (kind == FdKind::kTimerFd) return V(pb::THREAD_STATE_IDLE, "read on a timerfd: a sleep");
      return V(pb::THREAD_STATE_IO_WAIT, "blocked reading (read/pread/readv/recv/accept)");
    }
    case Family::kWrite:
      return V(pb::THREAD_STATE_IO_WAIT, "blocked writing (write/send/fsync)");
    case Family::kLock:
      if (call.nr == SYS_fcntl && call.args[1] != F_SETLKW && call.args[1] != F_OFD_SETLKW)
        return V(pb::THREAD_STATE_SLEEPING, "blocked in fcntl");
      return V(pb::THREAD_STATE_LOCK_WAIT, "futex/lock wait (mutex, condition, queue, semaphore, GIL)");
    case Family::kPoll:
      return ClassifyPoll(call, fds);
    case Family::kSleep:
      return V(pb::THREAD_STATE_IDLE, "nanosleep/clock_nanosleep");
    case Family::kSignalWait:
      return V(pb::THREAD_STATE_SLEEPING, "waiting for a signal");
    case Family::kChildWait:
      return V(pb::THREAD_STATE_SLEEPING, "waiting for a child process");
    case Family::kAio:
      return V(pb::THREAD_STATE_IO_WAIT, "waiting for asynchronous I/O");
    case Family::kOther:
      break;
  }
  return V(pb::THREAD_STATE_SLEEPING, "blocked in another system call");
}

}  // namespace gs
