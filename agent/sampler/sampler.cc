#include "agent/sampler/sampler.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "agent/core/agent_thread.h"
#include "agent/core/clock.h"
#include "agent/core/log.h"
#include "proto/batch_codec.h"

namespace gs {
namespace {

namespace pb = gpustall::trace;

constexpr uint8_t kRingSample = 1;
enum SampleFlags : uint8_t { kSamplePcsTruncated = 1, kSamplePythonTruncated = 2 };

// One sample in the ring: RingRecordHeader (count = native PCs), this, the PCs, the Python frames.
struct SampleFixed {
  uint64_t time_ns;
  uint64_t tid;
  uint64_t cpu_time_delta_ns;
  uint32_t cpu;
  uint8_t state;  // gpustall.trace.ThreadState
  uint8_t pad;
  uint16_t python_count;
};
static_assert(sizeof(SampleFixed) == 32, "fixed-size sample record");

constexpr size_t kRingBytes = 1 << 20;  // ~2000 deep samples; drained every 10 ms
constexpr int kMaxTargets = SignalStackSampler::kSlots;
constexpr uint64_t kAbandonAfterNs = 1000000000ull;
// How long a running thread's user-mode timer may stay unanswered before its samples go on
// without a native stack (SampleTarget).
constexpr uint64_t kUserTimerPatienceNs = 20000000ull;
constexpr uint64_t kRefindPythonTicks = 10;
// A thread is "computing" when its CPU time grew by at least 1/kComputeShareInverse of the wall
// time since the previous tick. 5 (20%): a busy thread on a machine oversubscribed 4x still
// qualifies; a thread that mostly sleeps or waits does not.
constexpr uint64_t kComputeShareInverse = 5;  // a thread without a thread state yet

// The CPU time of thread `tid` of this process: the kernel's per-thread CPU clock id
// (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED), what pthread_getcpuclockid builds), ns resolution.
bool ThreadCpuNs(uint64_t tid, uint64_t* ns) {
  const clockid_t id = static_cast<clockid_t>((~static_cast<uint64_t>(tid) << 3) | 6);
  timespec ts;
  if (clock_gettime(id, &ts) != 0) return false;
  *ns = static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
  return true;
}

}  // namespace

struct Sampler::Target {
  uint64_t tid = 0;  // 0: free entry
  uint64_t seen_tick = 0;
  bool ignored = false;  // an agent thread (all-threads mode)
  TaskFiles files;
  uint64_t last_cpu_ns = 0;
  uint64_t last_read_ns = 0;  // when last_cpu_ns was read
  bool has_cpu = false;
  uintptr_t tstate = 0;
  uint64_t tstate_tick = 0;
  uintptr_t stack_low = 0, stack_high = 0;
  bool pending = false;
  uint64_t pending_since = 0;
  int pending_cpu = -1;
  uint64_t pending_cpu_delta = 0;
  // The last blocked sample, kept while the thread has not run since (see SampleTarget): its
  // CPU time then, the call it was in, what stat said, the verdict, and its stacks
  // (Sampler::blocked_cache_ and python_cache_ at this target's index).
  bool last_valid = false;
  uint8_t last_kind = 0;  // TaskSyscall::Kind
  uint8_t last_verdict = 0;  // gpustall.trace.ThreadState
  bool last_pcs_truncated = false, last_python_truncated = false;
  int last_processor = -1;
  int last_pcs = 0, last_python = 0;
  long last_nr = -1;
  uint64_t last_sp = 0, last_pc = 0, last_blocked_cpu_ns = 0;
};

Sampler::Sampler(RingPool* pool, const StackCapturer* stacks, PythonStackReader* python)
    : pool_(pool), stacks_(stacks), python_(python) {}

Sampler::~Sampler() {
  Stop();
  if (task_dir_fd_ >= 0) close(task_dir_fd_);
}

bool Sampler::Start(const SamplerOptions& options, std::string* note) {
  if (started_ || options.hz <= 0) return false;
  options_ = options;
  period_ns_ = 1000000000ull / static_cast<uint64_t>(options.hz);
  targets_.reset(new Target[kMaxTargets]);
  ring_memory_.assign(kRingBytes + 8, 0);
  auto* aligned = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(ring_memory_.data()) + 7) & ~uintptr_t{7});
  ring_.Init(aligned, kRingBytes);
  if (options.all_threads) {
    task_dir_fd_ = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    dirents_.assign(16384, 0);
    if (task_dir_fd_ < 0) {
      *note = "sampler: cannot open /proc/self/task; sampling disabled";
      return false;
    }
  }
  if (options.signals != SampleSignals::kOff) {
    const SignalTrigger trigger =
        options.signals == SampleSignals::kAny ? SignalTrigger::kDirect : SignalTrigger::kUserMode;
    use_signals_ = signals_.Install(stacks_, python_, options.stack_depth, trigger, note);
  }
  // Untouched until a target uses its part (RSS only for the threads sampled).
  blocked_cache_.reset(new uint64_t[static_cast<size_t>(kMaxTargets) * static_cast<size_t>(options.stack_depth + 1)]);
  python_cache_.reset(new PythonFrameRef[static_cast<size_t>(kMaxTargets) * SignalSample::kMaxPython]);
  if (options.blocked_stacks && options.stack_depth + 1 <= static_cast<int>(sizeof blocked_pcs_ / sizeof blocked_pcs_[0])) {
    if (!blocked_.Init())
      Log(LogLevel::kWarn, "sampler: cannot prepare the unwinder of blocked threads; they keep their leaf PC only");
  }
  ready_.store(true, std::memory_order_release);
  // The sampler thread takes no signal (StartAgentThread): ours must never run on a thread that
  // is not sampled.
  if (StartAgentThread("gpustall-sample", &Sampler::ThreadMain, this, &thread_) != 0) {
    *note = "sampler: cannot start the sampler thread; sampling disabled";
    return false;
  }
  started_ = true;
  return true;
}

void Sampler::Stop() {
  if (!started_) return;
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stop_.store(true);
  }
  stop_cv_.notify_all();
  pthread_join(thread_, nullptr);
  started_ = false;
}

void* Sampler::ThreadMain(void* self) {
  static_cast<Sampler*>(self)->Run();
  return nullptr;
}

void Sampler::Run() {
  self_tid_ = static_cast<uint64_t>(syscall(SYS_gettid));
  uint64_t next = MonotonicNs() + period_ns_;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(stop_mu_);
      const uint64_t now = MonotonicNs();
      if (next > now) stop_cv_.wait_for(lock, std::chrono::nanoseconds(next - now), [this] { return stop_.load(); });
      if (stop_.load()) break;
    }
    Tick();
    // No catch-up burst after a slow tick (a descheduled sampler): the next tick in the future.
    const uint64_t now = MonotonicNs();
    next += period_ns_;
    if (next <= now) next = now + period_ns_ - (now - next) % period_ns_;
  }
  // The last tick's answers (a quarter of the period at most), then give late handlers no slot
  // to write into after we are gone.
  CollectAnswers(true);
  for (int i = 0; i < kMaxTargets; ++i) {
    Target& t = targets_[i];
    if (t.pending) {
      signals_.Release(i);
      t.pending = false;
    }
    signals_.Forget(i);
  }
}

void Sampler::Tick() {
  const uint64_t tick = ticks_.fetch_add(1, std::memory_order_relaxed) + 1;
  fds_.BeginTick();
  if (use_signals_ && !signals_.StillInstalled()) {
    use_signals_ = false;
    Log(LogLevel::kWarn, "sampler: the application installed its own handler for signal %d; "
                         "running threads are sampled without native stacks from now on",
        signals_.signal_number());
  }
  CollectAnswers(false);
  RefreshTargets(tick);
  // The answers to this tick's signals are collected at the next tick's start (above), not
  // waited for here: each answer woke the sleeping sampler thread, a context switch per
  // running thread per tick that cost more than the rest of its sample (BENCHMARKS.md, sampler
  // with 8 threads). A sample keeps the handler's own timestamp either way.
  for (int i = 0; i < kMaxTargets; ++i) {
    Target& t = targets_[i];
    if (t.tid == 0 || t.ignored) continue;
    SampleTarget(t, tick);
  }
}

Sampler::Target* Sampler::FindOrAddTarget(uint64_t tid, uint64_t tick) {
  Target* free_entry = nullptr;
  for (int i = 0; i < kMaxTargets; ++i) {
    Target& t = targets_[i];
    if (t.tid == tid) {
      t.seen_tick = tick;
      return &t;
    }
    if (t.tid == 0 && free_entry == nullptr && !t.pending) free_entry = &t;
  }
  if (free_entry == nullptr) return nullptr;  // more than kMaxTargets threads: the rest unsampled
  Target& t = *free_entry;
  if (!t.files.Open(tid)) return nullptr;
  t.tid = tid;
  t.seen_tick = tick;
  t.has_cpu = false;
  t.tstate = 0;
  t.tstate_tick = 0;
  t.stack_low = t.stack_high = 0;
  t.last_valid = false;
  t.ignored = tid == self_tid_;
  if (options_.all_threads && !t.ignored) {
    char name[32];
    TaskFiles::ReadName(tid, name, sizeof name);
    t.ignored = std::strncmp(name, "gpustall", 8) == 0;
  }
  ++target_count_;
  return &t;
}

void Sampler::RefreshTargets(uint64_t tick) {
  if (options_.all_threads) {
    lseek(task_dir_fd_, 0, SEEK_SET);
    while (true) {
      const long n = syscall(SYS_getdents64, task_dir_fd_, dirents_.data(), dirents_.size());
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        const auto* d = reinterpret_cast<const dirent64*>(dirents_.data() + off);
        off += d->d_reclen;
        if (d->d_name[0] < '0' || d->d_name[0] > '9') continue;
        FindOrAddTarget(std::strtoull(d->d_name, nullptr, 10), tick);
      }
    }
  } else {
    for (size_t i = 0; i < pool_->ring_count(); ++i) {
      ThreadRing& r = pool_->ring(i);
      if (r.state.load(std::memory_order_acquire) != ThreadRing::kOwned) continue;
      if (Target* t = FindOrAddTarget(r.tid, tick)) {
        t->stack_low = r.stack_low;
        t->stack_high = r.stack_high;
      }
    }
  }
  for (int i = 0; i < kMaxTargets; ++i) {
    Target& t = targets_[i];
    if (t.tid == 0 || t.seen_tick == tick) continue;
    // Gone (or no longer owns a ring): forget it. An outstanding signal is abandoned.
    if (t.pending) {
      signals_.Release(i);
      t.pending = false;
      abandoned_.fetch_add(1, std::memory_order_relaxed);
    }
    signals_.Forget(i);
    t.files.Close();
    t.tid = 0;
    --target_count_;
  }
}

void Sampler::SampleTarget(Target& t, uint64_t tick) {
  const int index = static_cast<int>(&t - targets_.get());
  const uint64_t now = MonotonicNs();
  uint64_t cpu_ns = 0, cpu_delta = 0;
  // Whether the thread ran for at least kComputeShare of the time since the last tick: only
  // such a thread is signalled (see below).
  bool computing = false;
  const bool have_cpu = ThreadCpuNs(t.tid, &cpu_ns);
  if (have_cpu) {
    cpu_delta = t.has_cpu && cpu_ns >= t.last_cpu_ns ? cpu_ns - t.last_cpu_ns : 0;
    computing = t.has_cpu && now > t.last_read_ns && cpu_delta * kComputeShareInverse >= now - t.last_read_ns;
    t.last_cpu_ns = cpu_ns;
    t.last_read_ns = now;
    t.has_cpu = true;
  }
  // Python frames read from here (blocked threads; running ones when there is no signal).
  auto remote_python = [&](bool* truncated) -> int {
    *truncated = false;
    if (python_ == nullptr || python_->state() != PythonStacksState::kActive) return 0;
    if (t.tstate == 0 && (t.tstate_tick == 0 || tick - t.tstate_tick >= kRefindPythonTicks)) {
      t.tstate = python_->FindThreadState(t.tid);
      t.tstate_tick = tick;
    }
    if (t.tstate == 0) return 0;
    const int n = python_->CaptureThread(t.tstate, t.tid, python_scratch_, SignalSample::kMaxPython, truncated);
    if (n < 0) {  // the thread state is gone (or was another thread's): look it up again
      t.tstate = 0;
      t.tstate_tick = 0;
      return 0;
    }
    return n;
  };
  const size_t pcs_stride = static_cast<size_t>(options_.stack_depth + 1);
  uint64_t* const cached_pcs = blocked_cache_.get() + static_cast<size_t>(index) * pcs_stride;
  PythonFrameRef* const cached_python = python_cache_.get() + static_cast<size_t>(index) * SignalSample::kMaxPython;

  // The syscall file first: "running" is all the state a running thread needs (it is R), and a
  // blocked thread's call, SP and PC. stat (the S/D/T letter, the last CPU) is read only where
  // that is not enough: a blocked thread in a new wait, a running thread that gets no signal.
  TaskSyscall call;
  t.files.ReadSyscall(&call);  // kUnreadable when it cannot be read: stat decides alone
  const bool blocked_call = call.kind == TaskSyscall::kInSyscall || call.kind == TaskSyscall::kNoSyscall;
  if (blocked_call && t.last_valid && have_cpu && t.last_blocked_cpu_ns == cpu_ns && t.last_kind == call.kind &&
      t.last_nr == call.nr && t.last_sp == call.sp && t.last_pc == call.pc) {
    // Still in the same call, and it has not run since the last sample (its CPU time, in ns,
    // has not moved): its state, its last CPU, what it waits on and both its stacks are as they
    // were. Nothing else is read (~1 µs instead of the reads, the classification, the Python
    // frames and the unwind: a long wait costs one full sample).
    blocked_repeated_.fetch_add(1, std::memory_order_relaxed);
    if (t.last_pcs > 1) blocked_reused_.fetch_add(1, std::memory_order_relaxed);
    Emit(now, t.tid, t.last_verdict, t.last_processor, cpu_delta, cached_pcs, t.last_pcs, t.last_pcs_truncated,
         cached_python, t.last_python, t.last_python_truncated);
    return;
  }
  t.last_valid = false;
  TaskStat stat;
  bool have_stat = false;
  if (call.kind == TaskSyscall::kRunning) {
    stat.state = 'R';
  } else {
    if (!t.files.ReadStat(&stat)) return;  // exited; forgotten at the next refresh
    have_stat = true;
  }

  if (stat.state == 'R') {
    if (t.pending) {
      // The previous signal is still unanswered: it stands for this tick. A user-mode timer
      // fires after 100 µs of the thread's own CPU time, which a thread that shares its core
      // with others may take a few ms of wall time to get; one that has not fired for
      // kUserTimerPatienceNs means a thread running in the kernel (or blocking our signal): it
      // gets the sample without a native stack below, and keeps its timer armed.
      if (signals_.trigger() == SignalTrigger::kDirect || now - t.pending_since < kUserTimerPatienceNs) return;
    }
    // R also covers a thread that is entering a system call and about to block: a signal that
    // lands then makes a non-restartable call (nanosleep, poll, ...) fail with EINTR. Threads
    // that wake up, run briefly and block again (sleep, queue and I/O loops) spend a large part
    // of their R time in exactly those transitions, so only a thread that was computing for a
    // good part of the last period is signalled; the others get a RUNNING sample with their
    // Python frames read from here and no native stack. Nor is one that the syscall file saw
    // blocked a moment before stat said R: it is just waking up.
    if (use_signals_ && computing && !blocked_call && !t.pending) {
      if (signals_.Request(index, t.tid, t.stack_low, t.stack_high)) {
        t.pending = true;
        t.pending_since = now;
        t.pending_cpu = have_stat ? stat.processor : -1;  // -1: the CPU the handler ran on
        t.pending_cpu_delta = cpu_delta;
        signals_sent_.fetch_add(1, std::memory_order_relaxed);
      }
      return;
    }
    if (!have_stat && !t.files.ReadStat(&stat)) return;  // its last CPU
    bool truncated = false;
    const int py = remote_python(&truncated);
    Emit(now, t.tid, pb::THREAD_STATE_RUNNING, stat.processor, cpu_delta, nullptr, 0, false, python_scratch_, py,
         truncated);
    return;
  }
  const WaitVerdict verdict = ClassifyTask(stat, call, &fds_);
  if (verdict.state == pb::THREAD_STATE_UNKNOWN) return;
  int pcs = 0;
  bool pcs_truncated = false;
  if (blocked_call) {
    blocked_pcs_[0] = call.pc;
    pcs = call.pc != 0 ? 1 : 0;
  }
  if (pcs == 1 && blocked_.ready()) {  // in a system call, or blocked outside one (a page fault)
    // One frame more than kept, to tell a stack cut at the depth from one that ended there.
    // The stack's top, when the thread's ring gave its range and SP lies in it.
    const uint64_t top = call.sp >= t.stack_low && call.sp < t.stack_high ? t.stack_high : 0;
    const int n = blocked_.Unwind(call.sp, call.pc, blocked_pcs_, options_.stack_depth + 1, nullptr, top);
    pcs_truncated = n > options_.stack_depth;
    pcs = pcs_truncated ? options_.stack_depth : n;
  }
  bool truncated = false;
  const int py = remote_python(&truncated);
  bool torn = false;
  if (pcs > 1) {
    // The native stack and the Python frames must show the same moment of a thread that stayed
    // blocked (the merge pairs Python runs with the native evaluation frames): it must not have
    // run at all since this sample began (its CPU time unchanged), or, without a CPU clock, it
    // must still be in the same call at the same SP/PC. Otherwise only the leaf is kept.
    bool still = false;
    uint64_t cpu_after = 0;
    if (have_cpu && ThreadCpuNs(t.tid, &cpu_after)) {
      still = cpu_after == cpu_ns;
    } else {
      TaskSyscall again;
      t.files.ReadSyscall(&again);
      still = again.kind == call.kind && again.nr == call.nr && again.sp == call.sp && again.pc == call.pc;
    }
    if (!still) {
      pcs = 1;
      pcs_truncated = false;
      torn = true;
      blocked_torn_.fetch_add(1, std::memory_order_relaxed);
    } else {
      blocked_unwinds_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  if (blocked_call && have_cpu && !torn) {
    // Kept for the next ticks: valid while the CPU time stays `cpu_ns`. Every read above came
    // after that CPU time was read, so a thread that ran meanwhile (a torn read) has a CPU time
    // that no longer matches, and this sample is never reused.
    std::memcpy(cached_pcs, blocked_pcs_, static_cast<size_t>(pcs) * sizeof(uint64_t));
    std::memcpy(cached_python, python_scratch_, static_cast<size_t>(py) * sizeof(PythonFrameRef));
    t.last_valid = true;
    t.last_kind = call.kind;
    t.last_verdict = static_cast<uint8_t>(verdict.state);
    t.last_processor = stat.processor;
    t.last_pcs = pcs;
    t.last_pcs_truncated = pcs_truncated;
    t.last_python = py;
    t.last_python_truncated = truncated;
    t.last_nr = call.nr;
    t.last_sp = call.sp;
    t.last_pc = call.pc;
    t.last_blocked_cpu_ns = cpu_ns;
  }
  Emit(now, t.tid, verdict.state, stat.processor, cpu_delta, blocked_pcs_, pcs, pcs_truncated, python_scratch_,
       py, truncated);
}

void Sampler::CollectAnswers(bool wait) {
  const uint64_t start = MonotonicNs();
  // A quarter of the period, at most 5 ms: the wait at Stop, and what counts as a late answer
  // (the thread was preempted, or did not run for that long).
  uint64_t budget = period_ns_ / 4;
  if (budget > 5000000) budget = 5000000;
  uint32_t answers = signals_.AnswerCount();
  while (true) {
    int outstanding = 0;
    const uint64_t now = MonotonicNs();
    for (int i = 0; i < kMaxTargets; ++i) {
      Target& t = targets_[i];
      if (!t.pending) continue;
      if (signals_.State(i) == SignalStackSampler::kDone) {
        const SignalSample& s = signals_.Result(i);
        if (s.skipped) {
          dropped_.fetch_add(1, std::memory_order_relaxed);
        } else {
          if (s.tstate != 0) t.tstate = s.tstate;
          const int max_pcs = options_.stack_depth;
          // Caught at a system call instruction: blocked (or blocking) in it, not computing.
          int state = pb::THREAD_STATE_RUNNING;
          if (s.syscall_nr >= 0) {
            TaskStat blocked;
            blocked.state = 'S';
            TaskSyscall call;
            call.kind = TaskSyscall::kInSyscall;
            call.nr = s.syscall_nr;
            for (int a = 0; a < 6; ++a) call.args[a] = s.syscall_args[a];
            state = ClassifyTask(blocked, call, &fds_).state;
          }
          Emit(s.time_ns, t.tid, state, t.pending_cpu >= 0 ? t.pending_cpu : s.cpu, t.pending_cpu_delta, s.pcs,
               s.pc_count > max_pcs ? max_pcs : s.pc_count, s.pc_count > max_pcs, s.python, s.python_count,
               s.python_truncated);
        }
        if (s.time_ns - t.pending_since > budget) late_.fetch_add(1, std::memory_order_relaxed);
        signals_.Release(i);
        t.pending = false;
      } else if (signals_.trigger() == SignalTrigger::kDirect && now - t.pending_since > kAbandonAfterNs) {
        // Never answered: the thread blocks the signal, or died between stat and the send. (A
        // user-mode timer stays armed instead: the thread answers when it next runs its own
        // code, and a thread that blocks the signal holds one notice, never a growing queue.)
        if (signals_.Release(i)) {
          // Answered at the last moment: counted as dropped, simpler than emitting it here.
        }
        abandoned_.fetch_add(1, std::memory_order_relaxed);
        dropped_.fetch_add(1, std::memory_order_relaxed);
        t.pending = false;
      } else {
        ++outstanding;
      }
    }
    const uint64_t elapsed = MonotonicNs() - start;
    if (!wait || outstanding == 0 || elapsed >= budget) return;
    signals_.WaitForAnswer(&answers, budget - elapsed);  // sleeps until a handler answers
  }
}

void Sampler::Emit(uint64_t time_ns, uint64_t tid, int state, int cpu, uint64_t cpu_delta, const uint64_t* pcs,
                   int pc_count, bool pcs_truncated, const PythonFrameRef* python, int python_count,
                   bool python_truncated) {
  const size_t bytes = sizeof(RingRecordHeader) + sizeof(SampleFixed) +
                       static_cast<size_t>(pc_count + python_count) * sizeof(uint64_t);
  uint8_t* p = ring_.BeginWrite(bytes);
  if (p == nullptr) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  auto* header = reinterpret_cast<RingRecordHeader*>(p);
  header->size = static_cast<uint32_t>(bytes);
  header->type = kRingSample;
  header->flags = static_cast<uint8_t>((pcs_truncated ? kSamplePcsTruncated : 0) |
                                       (python_truncated ? kSamplePythonTruncated : 0));
  header->count = static_cast<uint16_t>(pc_count);
  SampleFixed fixed{time_ns, tid, cpu_delta, static_cast<uint32_t>(cpu < 0 ? 0 : cpu), static_cast<uint8_t>(state),
                    0, static_cast<uint16_t>(python_count)};
  std::memcpy(p + sizeof(RingRecordHeader), &fixed, sizeof fixed);
  uint8_t* tail = p + sizeof(RingRecordHeader) + sizeof(SampleFixed);
  if (pc_count > 0) std::memcpy(tail, pcs, static_cast<size_t>(pc_count) * sizeof(uint64_t));
  if (python_count > 0)
    std::memcpy(tail + static_cast<size_t>(pc_count) * sizeof(uint64_t), python,
                static_cast<size_t>(python_count) * sizeof(PythonFrameRef));
  ring_.CommitWrite(bytes);
  recorded_.fetch_add(1, std::memory_order_relaxed);
}

size_t Sampler::DrainInto(ChunkBuilder* builder) {
  if (!ready_.load(std::memory_order_acquire)) return 0;
  std::vector<std::pair<uint64_t, trace::SampleBatchEncoder>> batches;
  size_t moved = 0;
  ring_.Drain([&](const RingRecordHeader& h) {
    if (h.type != kRingSample) return;
    const uint8_t* base = reinterpret_cast<const uint8_t*>(&h);
    SampleFixed fixed;
    std::memcpy(&fixed, base + sizeof(RingRecordHeader), sizeof fixed);
    const auto* pcs = reinterpret_cast<const uint64_t*>(base + sizeof(RingRecordHeader) + sizeof(SampleFixed));
    const auto* python = reinterpret_cast<const PythonFrameRef*>(pcs + h.count);
    trace::SampleRecord r;
    r.thread_id = fixed.tid;
    r.time_ns = fixed.time_ns;
    r.cpu_time_delta_ns = fixed.cpu_time_delta_ns;
    r.cpu = fixed.cpu;
    r.state = static_cast<pb::ThreadState>(fixed.state);
    r.stack = builder->InternStack(StackView{pcs, h.count, (h.flags & kSamplePcsTruncated) != 0, python,
                                             fixed.python_count, (h.flags & kSamplePythonTruncated) != 0});
    trace::SampleBatchEncoder* encoder = nullptr;
    for (auto& [tid, e] : batches)
      if (tid == fixed.tid) encoder = &e;
    if (encoder == nullptr) {
      batches.emplace_back(fixed.tid, trace::SampleBatchEncoder());
      encoder = &batches.back().second;
      encoder->Begin(builder->chunk()->add_samples(), fixed.tid, fixed.time_ns);
    }
    encoder->Add(r);
    ++moved;
  });
  builder->CountRecords(moved);
  return moved;
}

void Sampler::AddStats(pb::Stats* stats) {
  stats->set_samples_recorded(stats->samples_recorded() + recorded_.load(std::memory_order_relaxed));
  stats->set_samples_dropped(stats->samples_dropped() + dropped_.load(std::memory_order_relaxed));
}

SamplerCounters Sampler::counters() const {
  SamplerCounters c;
  c.recorded = recorded_.load(std::memory_order_relaxed);
  c.dropped = dropped_.load(std::memory_order_relaxed);
  c.signals_sent = signals_sent_.load(std::memory_order_relaxed);
  c.late_answers = late_.load(std::memory_order_relaxed);
  c.abandoned = abandoned_.load(std::memory_order_relaxed);
  c.eintr_races = signals_.eintr_races();
  c.ticks = ticks_.load(std::memory_order_relaxed);
  c.blocked_unwinds = blocked_unwinds_.load(std::memory_order_relaxed);
  c.blocked_torn = blocked_torn_.load(std::memory_order_relaxed);
  c.blocked_reused = blocked_reused_.load(std::memory_order_relaxed);
  c.blocked_repeated = blocked_repeated_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace gs
