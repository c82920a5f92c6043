// wait_classifier.h — what a sampled thread is doing, from the kernel's view of it: running, or
// blocked in which system call on what kind of file.
//
// The mapping (running on CPU, or blocked, with what it is blocked in):
//   stat R                                   RUNNING
//   stat D                                   IO_WAIT (uninterruptible: disk, NFS)
//   read/pread/readv/recv*/accept/write...   IO_WAIT; on an eventfd LOCK_WAIT, a timerfd IDLE
//   futex (mutex, condition, semaphore, the  LOCK_WAIT (Python's queue.get, Lock.acquire, the
//     GIL), semop, flock, fcntl(F_SETLKW)      GIL, std::condition_variable all wait in futex)
//   poll/ppoll/select/pselect6/epoll_wait*   by the files waited on: any pipe, socket, regular
//                                            file or tty → IO_WAIT; else eventfd/signalfd →
//                                            LOCK_WAIT; no file at all (select(0,...), Python
//                                            < 3.11's time.sleep) or only timerfds → IDLE;
//                                            files unreadable → SLEEPING (reason says why)
//   nanosleep/clock_nanosleep                IDLE (an explicit sleep)
//   anything else, or no syscall             SLEEPING
// `reason` is a static string for tests and debug logs.
//
// Thread safety: ClassifyTask is reentrant given a FdSource that is.
#ifndef GPUSTALL_AGENT_SAMPLER_WAIT_CLASSIFIER_H_
#define GPUSTALL_AGENT_SAMPLER_WAIT_CLASSIFIER_H_

#include <cstdint>

#include "agent/sampler/task_proc.h"
#include "proto/gstrace.pb.h"

namespace gs {

enum class FdKind : uint8_t {
  kUnknown = 0,  // not open, or unreadable
  kPipe,
  kSocket,
  kFile,         // regular file or block device
  kCharDevice,   // tty, /dev/...
  kEventFd,
  kTimerFd,
  kSignalFd,
  kEpoll,
  kOther,        // other anon inodes (inotify, pidfd, ...)
};

// From the target of /proc/self/fd/<n> ("pipe:[123]", "socket:[4]", "anon_inode:[eventfd]",
// "/dev/pts/0", "/data/x.bin").
FdKind FdKindFromLink(const char* link);

// The sampler's view of the process's files (ProcFdSource; a fake in tests).
class FdSource {
 public:
  virtual ~FdSource() = default;
  virtual FdKind KindOf(int fd) = 0;
  // The files a thread blocked in poll/ppoll/select/pselect6/epoll_wait* waits on: writes up to
  // `max` fds and returns how many (0: none), or -1 when they cannot be read.
  virtual int WaitedFds(const TaskSyscall& call, int* fds, int max) = 0;
};

struct WaitVerdict {
  gpustall::trace::ThreadState state = gpustall::trace::THREAD_STATE_UNKNOWN;
  const char* reason = "";
};

// The verdict for a thread whose stat says `stat`; `call` is only looked at when the thread is
// not running (the caller reads the syscall file only then).
WaitVerdict ClassifyTask(const TaskStat& stat, const TaskSyscall& call, FdSource* fds);

// True for the system calls whose blocked state depends on the files waited on.
bool IsPollFamily(long nr);

}  // namespace gs

#endif  // GPUSTALL_AGENT_SAMPLER_WAIT_CLASSIFIER_H_
