#include "agent/sampler/signal_stack_sampler.h"

#include <errno.h>
#include <sched.h>
#include <linux/futex.h>
#include <link.h>
#include <signal.h>
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

void OnSampleSignal(int, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  if (info != nullptr && info->si_code == SI_QUEUE && info->si_pid == g_pid.load(std::memory_order_relaxed) &&
      g_slots != nullptr) {
    const auto value = reinterpret_cast<uint64_t>(info->si_value.sival_ptr);
    const uint64_t index = value & 0xffff;
    const uint64_t seq = value >> 16;
    if (index < SignalStackSampler::kSlots) {
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

bool SignalStackSampler::Install(const StackCapturer* stacks, PythonStackReader* python, int depth,
                                 std::string* note) {
  if (signal_ != 0) return true;
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
    if (slot.ticket.compare_exchange_strong(t, Ticket(0, kFree), std::memory_order_acq_rel))
      return state == kDone;
  }
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
