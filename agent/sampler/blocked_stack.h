// blocked_stack.h — the native stack of a thread of this process that is blocked in a system
// call, unwound from the sampler thread without touching the blocked thread.
//
// The kernel gives, in /proc/self/task/<tid>/syscall, the blocked thread's stack pointer and
// program counter (nothing else: no frame pointer, no callee-saved registers). From those:
//   1. Copy: the stack from SP upward, 32 KiB first and the whole `window` only if the walk ran
//      off the end of that. Where the caller knows the top of the thread's stack (the sampler
//      does for the threads that own a ring), the copy stops there and is made of plain word
//      loads under a FaultScope: everything between SP and the top is the thread's live stack,
//      mapped. Otherwise process_vm_readv on our own pid, one iovec per page, so that the copy
//      ends cleanly at the first unreadable page (the end of the stack mapping, or a
//      neighbour's guard page) instead of faulting (where process_vm_readv is refused, word
//      loads under a FaultScope, page by page, do the same). The loads cost a fraction of the
//      system call, which pins every page it reads (~7 of a blocked sample's ~17 µs on a busy
//      2-core machine, BENCHMARKS.md). The copy is a snapshot: the thread may wake and
//      overwrite its stack at any moment, the copy does not move.
//   2. Relocate: every 8-byte word of the copy whose value lies inside the copied range (saved
//      frame pointers, pointers to locals) is moved by (copy - SP). The copy is then a
//      self-consistent stack at another address, and libunwind's local unwinder runs over it as
//      if it were the thread's own: CFA rules based on RSP or on a restored RBP both land in the
//      copy.
//   3. Unwind: unw_init_local2 (UNW_INIT_SIGNAL_FRAME: PC is the interrupted instruction, not a
//      return address) on a ucontext holding only RSP/RIP/RBP, unw_step until the stack ends,
//      leaves the copy, or `max` frames; under a FaultScope, so a garbage pointer read from a
//      torn copy ends the unwind instead of the process.
//   4. RBP: unknown at the system call (only SP/PC are given). Code without frame pointers
//      never needs it; a frame whose CFA is RBP-based needs the live RBP unless a callee's CFI
//      said where it was saved. The first walk starts with RBP at a zeroed sentinel; if a frame
//      lands on it, a second walk starts with RBP = the lowest word pair at or above that
//      frame's SP that looks like a frame record (a saved RBP pointing upward inside the copy,
//      or 0 where the caller keeps none, then an address that has unwind info). Scanning from SP instead would pick up stale
//      records left in the dead locals of the libc frames below.
// The caller re-reads the syscall file afterwards: if the thread is no longer in the same call
// at the same SP/PC, the copy may be torn and the stack is dropped (the sampler keeps the leaf).
//
// Why this and not the alternatives (BENCHMARKS.md has the cost per blocked sample):
//   * interposing the blocking libc calls (an OS-runtime trace): exact intervals, but every
//     call (nanosleep, read, recv, poll, epoll_wait, select, pthread_cond_*wait, sem_*wait, ...)
//     becomes an exported symbol of libgsagent.so with a cost on every call, blocking or not, and
//     it misses blocking that bypasses the wrappers (libstdc++'s atomic waits and raw
//     syscall(SYS_futex), a call made from inside libc, any call when the agent came in by
//     CUDA_INJECTION64_PATH alone); this needs no new symbol and sees whatever system call the
//     thread is in. The agent does both: the wrappers (agent/capture/host_wait/host_wait.def,
//     shim/host_wait_call.h; +44 ns per call that does not block, BENCHMARKS.md) give the common
//     calls exact intervals, which a 100 Hz sample cannot (a 6 ms sleep holds a sample ~60% of
//     the time), and this unwinder covers every wait they miss.
//   * libunwind's remote API (unw_create_addr_space with accessors over the copy): the same
//     unwind, but the agent's libunwind is built local-only (third_party/CMakeLists.txt); the
//     relocated copy gives the local unwinder the same view without a second library.
//   * kernel context-switch samples (perf_event_open, the context-switch software event with
//     user call chains): Debian's and Ubuntu's kernels refuse it at their default
//     perf_event_paranoid=3, Docker's default seccomp profile refuses perf_event_open, and the
//     user stack then still needs frame pointers or a copied stack unwound by CFI, as here.
//   * a frame-pointer walk over the copy: needs the live RBP as well, and stops at the first
//     function without frame pointers (glibc's); CFI reaches through both.
//
// Thread safety: one instance per thread (the sampler's). Init allocates; Unwind does not (it
// runs libunwind's local unwinder, which keeps a per-thread cache on the calling thread).
#ifndef GPUSTALL_AGENT_SAMPLER_BLOCKED_STACK_H_
#define GPUSTALL_AGENT_SAMPLER_BLOCKED_STACK_H_

#include <cstddef>
#include <cstdint>
#include <memory>

namespace gs {

class BlockedStackUnwinder {
 public:
  static constexpr size_t kDefaultWindow = 256 * 1024;

  // How the stack is copied: process_vm_readv on our own pid (the default; faults are the
  // kernel's problem), or plain loads under a FaultScope, which Copy falls back to for good when
  // process_vm_readv is refused (EPERM/ENOSYS: some seccomp profiles and sandboxes).
  enum class CopyMethod { kProcessVmReadv, kGuardedLoads };

  // Allocates the copy buffer and installs the fault guard. False if either failed.
  bool Init(size_t window = kDefaultWindow);
  bool ready() const { return buffer_ != nullptr; }
  CopyMethod copy_method() const { return method_; }
  void set_copy_method(CopyMethod method) { method_ = method; }  // tests

  // Writes up to `max` PCs of the blocked thread whose syscall file said `sp`/`pc`: pcs[0] = pc,
  // then the return addresses of its callers, innermost first. Returns the count (1 when only
  // the leaf could be had, 0 when max <= 0). *copied (optional) receives the bytes copied.
  // `stack_top` (0: unknown): the end of the thread's stack, above `sp`; the copy stops there
  // and needs no system call (see step 1).
  int Unwind(uint64_t sp, uint64_t pc, uint64_t* pcs, int max, size_t* copied = nullptr, uint64_t stack_top = 0);

 private:
  struct WalkEnd {
    uint64_t last_sp = 0;      // SP of the last frame reported
    bool needs_rbp = false;    // stopped at a frame whose CFA needs the unknown RBP
    bool beyond_copy = false;  // stopped because the next frame lies past the end of the copy
  };
  size_t Copy(uint64_t sp, size_t want, uint64_t stack_top);
  static size_t GuardedCopy(uint8_t* dst, uint64_t src, size_t bytes);
  uint64_t GuessFramePointer(uint64_t base, size_t bytes, uint64_t from) const;
  // Walks the copy at `base` (`bytes` long) of the stack at `origin`.
  int Walk(uint64_t origin, uint64_t base, size_t bytes, uint64_t pc, uint64_t rbp, uint64_t* pcs, int max,
           WalkEnd* end);

  std::unique_ptr<uint64_t[]> buffer_;
  size_t window_ = 0;
  CopyMethod method_ = CopyMethod::kProcessVmReadv;
  // Pass 1's RBP: a frame record of zeros (no caller) outside the copy.
  uint64_t zeros_[4] = {};
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_SAMPLER_BLOCKED_STACK_H_
