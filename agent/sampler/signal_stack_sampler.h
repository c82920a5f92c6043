// signal_stack_sampler.h — native and Python stacks of RUNNING threads, captured by the threads
// themselves in a signal handler that the sampler thread triggers.
//
// Why the signal must come from user mode: a handler that runs while a thread is blocked in a
// system call, or is entering one, makes the kernel end that call with EINTR whenever it is not
// restartable (nanosleep, poll/epoll/select, futex with a timeout, ...), even with SA_RESTART.
// Code that does not retry would see a failure the application never had. A thread's /proc stat
// R cannot tell user code from the entry of a system call that is about to block, and a handler
// cannot restart the call (the syscall number is gone, and sigreturn voids restart_block). So
// there are two triggers:
//   kUserMode (GS_SAMPLE_SIGNALS=user, the default): each sampled thread has a perf timer on its
//     own CPU time (PERF_COUNT_SW_TASK_CLOCK, exclude_kernel). Request enables it for one
//     overflow (PERF_EVENT_IOC_REFRESH 1); the kernel takes an overflow only when its timer
//     interrupt finds the thread in user mode, and the overflow's notice (F_SETSIG, owner the
//     thread: F_SETOWN_EX F_OWNER_TID) is queued before the thread returns to user mode, so
//     the handler runs before the thread's next instruction: never inside, nor on the way into,
//     a system call. A thread that blocks first answers when it next runs its own code; a
//     computing one within 100 µs of its CPU time (the timer's period).
//     One residue, in the kernel's F_SETSIG code: a notice that cannot be queued because the
//     user's whole pending-signal quota (RLIMIT_SIGPENDING) is used up becomes a plain SIGIO.
//     At most one notice per sampled thread is ever outstanding.
//   kDirect (GS_SAMPLE_SIGNALS=any): the sampler sends the signal (rt_tgsigqueueinfo) to a thread
//     that /proc said was R. Works without perf events; a thread that was entering a blocking
//     call when the signal landed gets EINTR (the handler counts those: eintr_races()). The
//     Sampler narrows that window by signalling only threads that were computing for a good
//     part of the last period.
//
// Why a mailbox and not the thread's own ring: the handler writes only into a slot the sampler
// armed for it (slot index and sequence travel in the signal's si_value), never into the API-call
// ring, so the ring keeps one producer path and the writer keeps one ring record format; the
// sampler thread turns answered slots into samples. A thread inside RecordApiCall (its
// reentrancy flag) gets no unwind (libunwind's per-thread cache is not reentrant): the slot says
// `skipped`, and the sampler drops and counts that sample.
//
// The signal: the highest real-time signal whose disposition is SIG_DFL at Install (the
// application's handlers are never replaced; glibc/NPTL's reserved ones are below SIGRTMIN);
// later Installs in the process (the next trace window) reuse it while it is still ours.
// kDirect sends it with rt_tgsigqueueinfo (si_code SI_QUEUE, si_pid = our pid, slot and
// sequence in si_value); kUserMode's notices carry si_code POLL_IN/POLL_HUP and si_fd, the slot's
// timer, and only the thread that timer watches answers them. The handler ignores any other
// sender. SA_RESTART|SA_SIGINFO|SA_ONSTACK, errno saved and restored. If the application later
// installs its own handler on that signal, StillInstalled() turns false and the sampler stops
// signalling (states only).
//
// Async-signal safety of the handler: CLOCK_MONOTONIC (vDSO), sched_getcpu (glibc reads the
// rseq area or calls the vDSO: no lock), StackCapturer::Capture
// (unw_backtrace: documented signal-safe for local unwinding once the thread's cache exists; the
// frame-pointer walk reads only the thread's stack range), PythonStackReader::Capture (documented
// async-signal-safe), atomics. A thread interrupted inside the dynamic loader (its PC in ld.so)
// gets no native unwind: libunwind may call dl_iterate_phdr for an uncached PC.
//
// Thread safety: Install/Request/Poll/Release from the one sampler thread; the handler on any.
// Lifetime: the slots are mapped at Install and never unmapped (a late signal may still land).
#ifndef GPUSTALL_AGENT_SAMPLER_SIGNAL_STACK_SAMPLER_H_
#define GPUSTALL_AGENT_SAMPLER_SIGNAL_STACK_SAMPLER_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "agent/python/python_stacks.h"
#include "agent/stacks/stack_capture.h"

namespace gs {

// What the handler leaves for the sampler. Written by the handler between kArmed and kDone.
struct SignalSample {
  static constexpr int kMaxPcs = 129;     // GS_STACK_DEPTH max + 1 (to see truncation)
  static constexpr int kMaxPython = 64;
  uint64_t time_ns = 0;
  uintptr_t tstate = 0;        // the thread's PyThreadState (0: none), a hint for later reads
  int cpu = -1;                // the CPU the handler ran on (sched_getcpu)
  int pc_count = 0;
  int python_count = 0;
  bool python_truncated = false;
  bool skipped = false;        // the thread was inside RecordApiCall: no stack taken
  // The interrupted PC is a system call instruction (x86-64): the thread is about to enter, or
  // the kernel rewound it to restart after this very signal, system call `syscall_nr` with
  // these arguments. It was blocked (or blocking), not computing: the sampler classifies it
  // like a blocked thread. -1 otherwise.
  long syscall_nr = -1;
  uint64_t syscall_args[6] = {};
  uint64_t pcs[kMaxPcs];
  PythonFrameRef python[kMaxPython];
};

enum class SignalTrigger { kUserMode, kDirect };

class SignalStackSampler {
 public:
  static constexpr int kSlots = 256;
  enum SlotState : uint32_t { kFree = 0, kArmed = 1, kWriting = 2, kDone = 3 };

  // Chooses the signal and installs the handler. `stacks`/`python` (either may be null) must
  // outlive every signal. `depth`: native frames kept (1..128). False (with *note) when no
  // real-time signal is free or the mapping fails.
  // kUserMode also needs perf events: false (with *note) where they are unavailable.
  bool Install(const StackCapturer* stacks, PythonStackReader* python, int depth, SignalTrigger trigger,
               std::string* note);
  bool installed() const { return signal_ != 0; }
  SignalTrigger trigger() const { return trigger_; }
  int signal_number() const { return signal_; }
  // One sigaction query: is our handler still the one the kernel calls?
  bool StillInstalled() const;

  // Arms `slot` (must be kFree) for thread `tid` of this process: kDirect sends the signal now,
  // kUserMode enables the slot's timer on `tid` (opened at the first Request for that thread).
  // `stack_low/high`: the thread's stack (fp mode; 0/0 unknown). False if that failed.
  bool Request(int slot, uint64_t tid, uintptr_t stack_low, uintptr_t stack_high);
  SlotState State(int slot) const;
  // Valid while State(slot) == kDone, until Release.
  const SignalSample& Result(int slot) const;
  // Frees a kDone slot, or abandons a kArmed one (a late handler then does nothing); waits for
  // a handler that is writing. Returns true if the slot had been answered.
  bool Release(int slot);
  // Closes the slot's timer (kUserMode): its thread is no longer sampled, or the sampler stops.
  void Forget(int slot);

  // Blocks until some handler answered after `*seen` was read, or `timeout_ns` passed: the
  // handler bumps a counter and wakes the sampler with FUTEX_WAKE (async-signal-safe), so the
  // sampler sleeps instead of polling. Updates *seen. Call AnswerCount() first for *seen.
  uint32_t AnswerCount() const;
  void WaitForAnswer(uint32_t* seen, uint64_t timeout_ns) const;

  // Signals that landed on a system call the thread had just entered (see the file comment).
  uint64_t eintr_races() const;

 private:
  int signal_ = 0;
  SignalTrigger trigger_ = SignalTrigger::kUserMode;
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_SAMPLER_SIGNAL_STACK_SAMPLER_H_
