// proc_fd_source.h — the FdSource of a live process: file kinds from /proc/self/fd/<n> links,
// the fds a poll/select call waits on from the caller's own arrays, an epoll set's from
// /proc/self/fdinfo/<epfd>.
//
// Cheap per tick: a kind read once is remembered until the next BeginTick (a fd number may be
// closed and reused between ticks, never within the few microseconds of one). A pipe or socket
// is known from fstat's mode; other files from their /proc/self/fd link (a named FIFO is then
// a pipe, not a file: both are input/output waits). The arrays of a
// blocked poll()/select() are read with process_vm_readv on our own pid, which fails with EFAULT
// instead of faulting if the memory is gone; if the call is refused (seccomp), WaitedFds says -1
// and the classifier says why.
//
// Thread safety: one thread (the sampler). Fixed buffers; no allocation after construction.
#ifndef GPUSTALL_AGENT_SAMPLER_PROC_FD_SOURCE_H_
#define GPUSTALL_AGENT_SAMPLER_PROC_FD_SOURCE_H_

#include <cstdint>

#include "agent/sampler/wait_classifier.h"

namespace gs {

class ProcFdSource final : public FdSource {
 public:
  // Forgets the kinds read during the previous tick.
  void BeginTick() { ++tick_; }
  FdKind KindOf(int fd) override;
  int WaitedFds(const TaskSyscall& call, int* fds, int max) override;

 private:
  static constexpr int kCacheSlots = 1024;  // direct-mapped by fd number
  struct Entry {
    uint64_t tick = 0;
    int fd = -1;
    FdKind kind = FdKind::kUnknown;
  };
  int EpollFds(int epfd, int* fds, int max);
  Entry cache_[kCacheSlots];
  uint64_t tick_ = 1;
  char buffer_[4096];
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_SAMPLER_PROC_FD_SOURCE_H_
