#include "agent/sampler/signal_stack_sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <linux/futex.h>
#include <link.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstring>
#include <new>

#include "agent/core/clock.h"
#include "agent/record/ring_recorder.h"

namespace gs {
namespace {

struct Slot {
  std::atomic<uint64_t> ticket{0};  // sequence << 2 | SlotState
  // kUserMode: the perf timer of the thread this slot samples (-1: none), opened by process
  // `fd_pid` for thread `fd_tid` (a forked child inherits the descriptor of its parent's timer).
  std::atomic<int> fd{-1};
  std::atomic<pid_t> fd_pid{0};
  std::atomic<uint64_t> fd_tid{0};
  uintptr_t stack_low = 0;
  uintptr_t stack_high = 0;
  SignalSample sample;
};

// Process-wide, for the handler (a plain function). Set once by Install, before the handler is
// installed; never freed.
Slot* g_slots = nullptr;
const StackCapturer* g_stacks = nullptr;
PythonStackReader* g_python = nullptr;
int g_depth = 32;
std::atomic<pid_t> g_pid{0};
uintptr_t g_loader_begin = 0, g_loader_end = 0;  // ld.so's text: no unwinding in there
std::atomic<uint64_t> g_eintr_races{0};
std::atomic<uint32_t> g_answers{0};  // futex word: bumped by every answer
uint64_t g_sequence = 0;  // sampler thread only
// The signal an earlier Install chose: a later sampler (the next on-demand window, a forked
// child that activates) reuses it while our handler is still the one installed, instead of
// taking one more real-time signal per trace.
std::atomic<int> g_installed_signal{0};

bool HandlerInstalled(int sig);

constexpr uint64_t Ticket(uint64_t seq, uint32_t state) { return seq << 2 | state; }

// The interrupted context's registers (x86-64 and aarch64).
struct Interrupted {
  uintptr_t pc, sp, fp;
  long ret;  // the return value register (a syscall's result, or its number before entry)
  uint64_t args[6];
};
Interrupted FromContext(void* context) {
  const auto* uc = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
  const greg_t* g = uc->uc_mcontext.gregs;
  return Interrupted{static_cast<uintptr_t>(g[REG_RIP]),
                     static_cast<uintptr_t>(g[REG_RSP]),
                     static_cast<uintptr_t>(g[REG_RBP]),
                     static_cast<long>(g[REG_RAX]),
                     {static_cast<uint64_t>(g[REG_RDI]), static_cast<uint64_t>(g[REG_RSI]),
                      static_cast<uint64_t>(g[REG_RDX]), static_cast<uint64_t>(g[REG_R10]),
                      static_cast<uint64_t>(g[REG_R8]), static_cast<uint64_t>(g[REG_R9])}};
#elif defined(__aarch64__)
  return Interrupted{static_cast<uintptr_t>(uc->uc_mcontext.pc), static_cast<uintptr_t>(uc->uc_mcontext.sp),
                     static_cast<uintptr_t>(uc->uc_mcontext.regs[29]), static_cast<long>(uc->uc_mcontext.regs[0]),
                     {}};
#else
  (void)uc;
  return Interrupted{0, 0, 0, 0, {}};
#endif
}

// Did the signal end a system call with EINTR? The instruction before the PC is the syscall
// instruction and the result register holds -EINTR. Read only when the previous two bytes are on
// the PC's own page (mapped: the thread is executing it).
bool InterruptedSyscall(const Interrupted& at) {
#if defined(__x86_64__)
  if (at.ret != -EINTR || (at.pc & 0xfff) < 2) return false;
  const auto* code = reinterpret_cast<const uint8_t*>(at.pc - 2);
  return code[0] == 0x0f && code[1] == 0x05;
#else
  (void)at;
  return false;
#endif
}

// Is the interrupted PC a syscall instruction? (Read only when both bytes are on the PC's own
// page.) Then RAX holds the system call's number: the kernel rewinds a restartable call that a
// signal interrupted to exactly this state, and a thread preempted just before a syscall is in it.
long PendingSyscall(const Interrupted& at) {
#if defined(__x86_64__)
  if ((at.pc & 0xfff) > 0xffe) return -1;
  const auto* code = reinterpret_cast<const uint8_t*>(at.pc);
  if (code[0] == 0x0f && code[1] == 0x05 && at.ret >= 0 && at.ret < 1024) return at.ret;
#else
  (void)at;
#endif
  return -1;
}

// Frame-pointer walk from the interrupted context: pc, then the return addresses of the rbp
// chain, every read bounds-checked against the thread's stack.
int WalkFromContext(const Interrupted& at, uintptr_t low, uintptr_t high, uint64_t* pcs, int max) {
  int n = 0;
  pcs[n++] = at.pc;
  uintptr_t fp = at.fp;
  while (n < max && low != 0 && fp >= low && fp + 16 <= high && (fp & 7) == 0) {
    const uintptr_t next = reinterpret_cast<const uintptr_t*>(fp)[0];
    const uintptr_t ret = reinterpret_cast<const uintptr_t*>(fp)[1];
    if (ret == 0) break;
    pcs[n++] = ret;
    if (next <= fp) break;
    fp = next;
  }
  return n;
}

void CaptureInto(Slot& slot, const Interrupted& at) {
  SignalSample& s = slot.sample;
  const int max = g_depth + 1;
  s.pc_count = 0;
  const bool in_loader = at.pc >= g_loader_begin && at.pc < g_loader_end;
  if (g_stacks != nullptr && !in_loader) {
    if (g_stacks->mode() == StackMode::kUnwind) {
      // unw_backtrace from here: [this handler's frames..., the signal trampoline, the
      // interrupted PC, its callers]. Keep from the interrupted PC on.
      uint64_t scratch[SignalSample::kMaxPcs + 8];
      const int got = g_stacks->Capture(scratch, SignalSample::kMaxPcs + 8, 0, slot.stack_low, slot.stack_high);
      int from = -1;
      for (int i = 0; i < got && i < 8; ++i) {
        if (scratch[i] == at.pc) {
          from = i;
          break;
        }
      }
      if (from >= 0) {
        for (int i = from; i < got && s.pc_count < max; ++i) s.pcs[s.pc_count++] = scratch[i];
      } else {
        s.pcs[s.pc_count++] = at.pc;  // the unwinder lost the signal frame: the leaf at least
      }
    } else if (g_stacks->mode() == StackMode::kFramePointer) {
      s.pc_count = WalkFromContext(at, slot.stack_low, slot.stack_high, s.pcs, max);
    } else {
      s.pcs[s.pc_count++] = at.pc;
    }
  } else {
    s.pcs[s.pc_count++] = at.pc;
  }
  s.python_count = 0;
  s.python_truncated = false;
  s.tstate = 0;
  if (g_python != nullptr && g_python->enabled()) {
    bool truncated = false;
    s.python_count = g_python->Capture(s.python, SignalSample::kMaxPython, &truncated);
    s.python_truncated = truncated;
    s.tstate = reinterpret_cast<uintptr_t>(g_python->runtime().get_this_thread_state());
  }
}

// Which armed slot does this signal answer, and with which sequence? kDirect: the sampler's own
// rt_tgsigqueueinfo (SI_QUEUE from this process, slot and sequence in si_value). kUserMode: the
// kernel's overflow notice of a slot's perf timer (si_code POLL_IN or POLL_HUP, si_fd the timer);
// it answers whatever that slot has armed now. False for any other sender.
bool AnsweredSlot(const siginfo_t* info, uint64_t* index, uint64_t* seq) {
  if (info == nullptr || g_slots == nullptr) return false;
  const pid_t pid = g_pid.load(std::memory_order_relaxed);
  if (info->si_code == SI_QUEUE && info->si_pid == pid) {
    const auto value = reinterpret_cast<uint64_t>(info->si_value.sival_ptr);
    *index = value & 0xffff;
    *seq = value >> 16;
    return *index < SignalStackSampler::kSlots;
  }
  if ((info->si_code == POLL_IN || info->si_code == POLL_HUP) && info->si_fd >= 0) {
    for (uint64_t i = 0; i < SignalStackSampler::kSlots; ++i) {
      const Slot& slot = g_slots[i];
      if (slot.fd.load(std::memory_order_acquire) != info->si_fd ||
          slot.fd_pid.load(std::memory_order_relaxed) != pid)
        continue;
      *index = i;
      // A queued notice of a timer since closed can carry a descriptor number reused for
      // another thread's timer: only the thread the slot samples answers it.
      if (slot.fd_tid.load(std::memory_order_relaxed) != static_cast<uint64_t>(syscall(SYS_gettid))) return false;
      *seq = slot.ticket.load(std::memory_order_acquire) >> 2;
      return true;
    }
  }
  return false;
}

void OnSampleSignal(int, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  uint64_t index = 0, seq = 0;
  if (AnsweredSlot(info, &index, &seq)) {
    Slot& slot = g_slots[index];
    uint64_t expected = Ticket(seq, SignalStackSampler::kArmed);
    if (slot.ticket.compare_exchange_strong(expected, Ticket(seq, SignalStackSampler::kWriting),
                                            std::memory_order_acquire)) {
      const Interrupted at = FromContext(context);
      if (InterruptedSyscall(at)) g_eintr_races.fetch_add(1, std::memory_order_relaxed);
      slot.sample.time_ns = MonotonicNs();
      slot.sample.cpu = sched_getcpu();  // glibc: the rseq area or the vDSO, no lock
      slot.sample.syscall_nr = PendingSyscall(at);
      for (int i = 0; i < 6; ++i) slot.sample.syscall_args[i] = at.args[i];
      slot.sample.skipped = RingRecorder::CallingThreadInRecord();
      if (!slot.sample.skipped) {
        CaptureInto(slot, at);
      } else {
        slot.sample.pc_count = slot.sample.python_count = 0;
      }
      slot.ticket.store(Ticket(seq, SignalStackSampler::kDone), std::memory_order_release);
      g_answers.fetch_add(1, std::memory_order_release);
      syscall(SYS_futex, reinterpret_cast<uint32_t*>(&g_answers), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
    }
  }
  errno = saved_errno;
}

int FindLoader(dl_phdr_info* info, size_t, void*) {
  const char* name = info->dlpi_name;
  if (name == nullptr || std::strstr(name, "/ld-linux") == nullptr) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
      g_loader_begin = info->dlpi_addr + ph.p_vaddr;
      g_loader_end = g_loader_begin + ph.p_memsz;
    }
  }
  return 1;
}

}  // namespace

namespace {

// A perf timer on thread `tid` (0: the caller) that counts its CPU time and overflows every
// kTimerPeriodNs of it, but only when the timer interrupt finds the thread in user mode
// (exclude_kernel: the kernel skips an overflow that would land in kernel mode). Disabled until
// PERF_EVENT_IOC_REFRESH; never inherited. -1 (errno set) when perf events are unavailable
// (perf_event_paranoid above 2, a seccomp filter, no CONFIG_PERF_EVENTS) or the thread is gone.
// 100 µs of the thread's CPU time: how late after Request a computing thread answers (a tick is
// 10 ms at the default rate), and the one timer interrupt per period that an armed thread which
// stays in the kernel pays (about 1%). The kernel takes nothing under 10 µs for these timers.
constexpr uint64_t kTimerPeriodNs = 100000;
int OpenUserModeTimer(uint64_t tid) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = kTimerPeriodNs;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, static_cast<pid_t>(tid), -1, -1,
                                  static_cast<unsigned long>(PERF_FLAG_FD_CLOEXEC)));
}

// Makes each overflow of `fd` send `sig` to thread `tid` (si_fd = fd): F_SETSIG, then the owner,
// then O_ASYNC, so no notice can go out before the signal and the owner are set.
bool RouteOverflowsToThread(int fd, uint64_t tid, int sig) {
  f_owner_ex owner{F_OWNER_TID, static_cast<pid_t>(tid)};
  const int flags = fcntl(fd, F_GETFL);
  return flags >= 0 && fcntl(fd, F_SETSIG, sig) == 0 && fcntl(fd, F_SETOWN_EX, &owner) == 0 &&
         fcntl(fd, F_SETFL, flags | O_ASYNC) == 0;
}

}  // namespace

bool SignalStackSampler::Install(const StackCapturer* stacks, PythonStackReader* python, int depth,
                                 SignalTrigger trigger, std::string* note) {
  if (signal_ != 0) return true;
  if (trigger == SignalTrigger::kUserMode) {
    const int probe = OpenUserModeTimer(0);
    if (probe < 0) {
      *note = std::string("sampler: perf events are unavailable (") + std::strerror(errno) +
              "); running threads are sampled without native stacks (GS_SAMPLE_SIGNALS=any signals "
              "them directly, at the risk of an EINTR in a call they are entering)";
      return false;
    }
    close(probe);
  }
  trigger_ = trigger;
  if (g_slots == nullptr) {
    void* memory = mmap(nullptr, sizeof(Slot) * kSlots, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) {
      *note = "sampler: cannot map the signal mailboxes; sampling thread states only";
      return false;
    }
    g_slots = static_cast<Slot*>(memory);
    for (int i = 0; i < kSlots; ++i) new (&g_slots[i]) Slot();
  }
  g_stacks = stacks;
  g_python = python;
  g_depth = depth < 1 ? 1 : depth > SignalSample::kMaxPcs - 1 ? SignalSample::kMaxPcs - 1 : depth;
  g_pid.store(getpid(), std::memory_order_relaxed);
  dl_iterate_phdr(&FindLoader, nullptr);
  if (const int previous = g_installed_signal.load(); previous != 0 && HandlerInstalled(previous)) {
    signal_ = previous;
    return true;
  }
  // Highest first: libraries that borrow real-time signals tend to take SIGRTMIN + small n.
  for (int sig = SIGRTMAX; sig >= SIGRTMIN; --sig) {
    struct sigaction current;
    if (sigaction(sig, nullptr, &current) != 0) continue;
    if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) continue;
    struct sigaction ours;
    std::memset(&ours, 0, sizeof ours);
    ours.sa_sigaction = &OnSampleSignal;
    ours.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigfillset(&ours.sa_mask);  // nothing nests inside a capture
    if (sigaction(sig, &ours, nullptr) != 0) continue;
    signal_ = sig;
    g_installed_signal.store(sig);
    return true;
  }
  *note = "sampler: no real-time signal is free (all have handlers); sampling thread states and "
          "blocked threads' Python frames only";
  return false;
}

namespace {
bool HandlerInstalled(int sig) {
  struct sigaction current;
  if (sigaction(sig, nullptr, &current) != 0) return false;
  return (current.sa_flags & SA_SIGINFO) != 0 && current.sa_sigaction == &OnSampleSignal;
}
}  // namespace

bool SignalStackSampler::StillInstalled() const { return signal_ != 0 && HandlerInstalled(signal_); }

bool SignalStackSampler::Request(int index, uint64_t tid, uintptr_t stack_low, uintptr_t stack_high) {
  if (signal_ == 0 || index < 0 || index >= kSlots) return false;
  Slot& slot = g_slots[index];
  const uint64_t seq = ++g_sequence & ((uint64_t{1} << 46) - 1);
  slot.stack_low = stack_low;
  slot.stack_high = stack_high;
  if (trigger_ == SignalTrigger::kUserMode) {
    const pid_t pid = getpid();
    if (slot.fd_pid.load(std::memory_order_relaxed) != pid) {
      // Inherited through fork: the parent's timer. The child may already have closed or reused
      // that descriptor number, so it is dropped, never closed.
      slot.fd.store(-1, std::memory_order_release);
    }
    if (slot.fd.load(std::memory_order_relaxed) < 0 || slot.fd_tid.load(std::memory_order_relaxed) != tid) {
      Forget(index);
      const int fd = OpenUserModeTimer(tid);
      if (fd < 0) return false;
      if (!RouteOverflowsToThread(fd, tid, signal_)) {
        close(fd);
        return false;
      }
      slot.fd_tid.store(tid, std::memory_order_relaxed);
      slot.fd_pid.store(pid, std::memory_order_relaxed);
      slot.fd.store(fd, std::memory_order_release);
    }
    slot.ticket.store(Ticket(seq, kArmed), std::memory_order_release);
    if (ioctl(slot.fd.load(std::memory_order_relaxed), PERF_EVENT_IOC_REFRESH, 1) != 0) {
      slot.ticket.store(Ticket(0, kFree), std::memory_order_release);
      return false;
    }
    return true;
  }
  slot.ticket.store(Ticket(seq, kArmed), std::memory_order_release);
  siginfo_t info;
  std::memset(&info, 0, sizeof info);
  info.si_signo = signal_;
  info.si_code = SI_QUEUE;
  info.si_pid = getpid();
  info.si_uid = getuid();
  info.si_value.sival_ptr = reinterpret_cast<void*>(seq << 16 | static_cast<uint64_t>(index));
  if (syscall(SYS_rt_tgsigqueueinfo, getpid(), static_cast<pid_t>(tid), signal_, &info) != 0) {
    slot.ticket.store(Ticket(0, kFree), std::memory_order_release);
    return false;
  }
  return true;
}

SignalStackSampler::SlotState SignalStackSampler::State(int index) const {
  return static_cast<SlotState>(g_slots[index].ticket.load(std::memory_order_acquire) & 3);
}

const SignalSample& SignalStackSampler::Result(int index) const { return g_slots[index].sample; }

bool SignalStackSampler::Release(int index) {
  Slot& slot = g_slots[index];
  while (true) {
    uint64_t t = slot.ticket.load(std::memory_order_acquire);
    const uint32_t state = static_cast<uint32_t>(t & 3);
    if (state == kWriting) {  // the handler finishes in microseconds (unless preempted)
      sched_yield();
      continue;
    }
    if (slot.ticket.compare_exchange_strong(t, Ticket(0, kFree), std::memory_order_acq_rel)) {
      // An abandoned timer stops here (an answered one disabled itself at its one overflow).
      const int fd = slot.fd.load(std::memory_order_relaxed);
      if (state == kArmed && fd >= 0 && slot.fd_pid.load(std::memory_order_relaxed) == getpid())
        ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
      return state == kDone;
    }
  }
}

void SignalStackSampler::Forget(int index) {
  if (g_slots == nullptr || index < 0 || index >= kSlots) return;
  Slot& slot = g_slots[index];
  const int fd = slot.fd.exchange(-1, std::memory_order_acq_rel);
  if (fd >= 0 && slot.fd_pid.load(std::memory_order_relaxed) == getpid()) close(fd);
  slot.fd_tid.store(0, std::memory_order_relaxed);
}

uint32_t SignalStackSampler::AnswerCount() const { return g_answers.load(std::memory_order_acquire); }

void SignalStackSampler::WaitForAnswer(uint32_t* seen, uint64_t timeout_ns) const {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "futex word");
  const uint32_t now = g_answers.load(std::memory_order_acquire);
  if (now == *seen) {
    timespec ts{static_cast<time_t>(timeout_ns / 1000000000u), static_cast<long>(timeout_ns % 1000000000u)};
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&g_answers), FUTEX_WAIT_PRIVATE, *seen, &ts, nullptr, 0);
  }
  *seen = g_answers.load(std::memory_order_acquire);
}

uint64_t SignalStackSampler::eintr_races() const { return g_eintr_races.load(std::memory_order_relaxed); }

}  // namespace gs
