// sampler.h — the wall-clock sampler: GS_SAMPLE_HZ times a second, for each
// target thread, its state (running, or blocked in what), its CPU time, and its stack.
//
// Targets: the threads that own a ring in the RingPool (the threads that issue CUDA work), or,
// with GS_SAMPLE_ALL_THREADS=1, every thread of the process (/proc/self/task) except the agent's
// own (named gpustall-*).
//
// One tick, per target (the files kept open, read with pread):
//   1. The thread's CPU clock (clock_gettime on its per-thread CPU clock id: ns resolution,
//      unlike stat's ticks) gives cpu_time_delta. Then /proc/self/task/<tid>/syscall: "running"
//      (the thread is R), or the system call it is blocked in, with its arguments, SP and PC.
//      /proc/self/task/<tid>/stat (the S/D/T letter and the last CPU) is read only when that is
//      not enough: a blocked thread in a new wait, a running thread that gets no signal, a
//      syscall file that cannot be read.
//   2. Running (R) and computing (its CPU time grew by at least 20% of the wall time since the
//      last tick): the thread captures its own native + Python stack in a signal handler
//      (SignalStackSampler; see its header for why only running threads get a signal, and why
//      only computing ones: a sleep/wait loop is R mostly while entering or leaving a system
//      call); the handler also says on which CPU it ran. The sampler does not wait for the
//      answers: it collects them at the start of the next tick (at Stop it waits up to a quarter
//      of the period for the last ones), and each sample keeps the handler's own timestamp.
//      Waiting within the tick cost the sampler thread a sleep and a wake-up per answer. A thread
//      whose answer is still outstanding (not run for a whole period on a busy machine) is not
//      signalled again. A handler that finds the thread at a system call instruction (entering
//      it, or rewound by the kernel to restart it) reports the call, classified as in step 3.
//      R but not computing: a RUNNING sample with the Python frames read as in step 3 (the
//      thread changes them meanwhile: CaptureThread discards a read that straddled a change).
//   3. Blocked (S/D): never signalled. The syscall file says in which system call and with which
//      arguments; WaitClassifier turns that into IO_WAIT / LOCK_WAIT / IDLE / SLEEPING. Its
//      Python frames are read from the sampler thread (PythonStackReader::CaptureThread: the
//      thread state found in the interpreter's thread list, every read guarded; the frames are
//      stable while the thread is blocked). Its native stack is unwound from here
//      (GS_BLOCKED_STACKS=1, the default): BlockedStackUnwinder copies the thread's stack from
//      the syscall file's SP and runs libunwind over the copy (see its header for how, and why
//      this way). After the Python frames are read too, the thread's CPU time is read again: a
//      thread that ran meanwhile (woke up during the copy or the read; the native stack and the
//      Python frames could then show different moments, which the merge of the two would
//      mispair) keeps only the leaf PC. No signal, so the application never sees an EINTR from
//      it. With the setting off, the native stack is that one leaf PC (the libc function making
//      the call).
//   4. A thread found again in the same call at the same SP/PC whose CPU time has not moved
//      since its last blocked sample (it has not run) repeats that sample: state, last CPU,
//      verdict, native and Python stacks. Only the CPU clock and the syscall file are read
//      (~1 µs instead of ~10-20: a long wait costs one full sample).
// Samples go through an SPSC byte ring (producer: sampler thread; consumer: the writer thread in
// DrainInto), one fixed-layout record each; a full ring drops and counts.
//
// Lifecycle: Start at activation (after the writer thread: the agent is lazy, so never before the
// process's first CUDA call), Stop at finish/exec (joins the thread). Fork: the child has no
// sampler thread; the agent leaks its parts in the child and a child that activates makes a new
// Sampler. Memory: everything is allocated in Start; the thread allocates nothing afterwards.
//
// Thread safety: Start/Stop from the agent's control path; DrainInto/AddStats on the writer
// thread (serialised by the writer mutex); the sampler thread is internal.
#ifndef GPUSTALL_AGENT_SAMPLER_SAMPLER_H_
#define GPUSTALL_AGENT_SAMPLER_SAMPLER_H_

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/writer/chunk_contributor.h"
#include "agent/python/python_stacks.h"
#include "agent/sampler/blocked_stack.h"
#include "agent/record/ring.h"
#include "agent/record/ring_pool.h"
#include "agent/sampler/proc_fd_source.h"
#include "agent/sampler/signal_stack_sampler.h"
#include "agent/sampler/task_proc.h"
#include "agent/stacks/stack_capture.h"

namespace gs {

struct SamplerOptions {
  int hz = 100;              // GS_SAMPLE_HZ; 0 disables
  bool all_threads = false;  // GS_SAMPLE_ALL_THREADS
  int stack_depth = 32;      // native frames kept per sample
  // GS_SAMPLE_SIGNALS: how running threads are signalled for their native stacks
  // (SignalStackSampler); kOff: never (they get Python frames read remotely).
  SampleSignals signals = SampleSignals::kUser;
  bool blocked_stacks = true;  // GS_BLOCKED_STACKS: unwind blocked threads' native stacks
};

struct SamplerCounters {
  uint64_t recorded = 0;       // samples that reached the ring
  uint64_t dropped = 0;        // ring full, or the thread was inside an API-call record
  uint64_t signals_sent = 0;
  uint64_t late_answers = 0;   // answered more than a quarter of the period after the signal
  uint64_t abandoned = 0;      // never answered (thread exited or blocks the signal)
  uint64_t eintr_races = 0;    // see SignalStackSampler
  uint64_t ticks = 0;
  uint64_t blocked_unwinds = 0;  // blocked samples whose native stack was unwound (> 1 frame)
  uint64_t blocked_torn = 0;     // unwound, then dropped: the thread ran meanwhile
  uint64_t blocked_reused = 0;   // blocked samples that reused the thread's last unwound stack
  uint64_t blocked_repeated = 0;  // blocked samples repeated from the thread's last (not run since)
};

class Sampler final : public ChunkContributor {
 public:
  // The pointers must outlive the sampler (the agent's parts are never freed). `python` may be
  // null or inactive.
  Sampler(RingPool* pool, const StackCapturer* stacks, PythonStackReader* python);
  ~Sampler() override;

  // Allocates, installs the signal handler and starts the thread. False (and *note says why)
  // if sampling could not start; a degraded start (no free signal) returns true with a note.
  bool Start(const SamplerOptions& options, std::string* note);
  // Stops and joins the thread. Idempotent.
  void Stop();
  bool running() const { return started_; }
  uint64_t period_ns() const { return period_ns_; }
  SamplerCounters counters() const;

  // --- ChunkContributor (writer thread) ---
  size_t DrainInto(ChunkBuilder* builder) override;
  void AddStats(gpustall::trace::Stats* stats) override;

 private:
  struct Target;
  static void* ThreadMain(void* self);
  void Run();
  void Tick();
  void RefreshTargets(uint64_t tick);
  Target* FindOrAddTarget(uint64_t tid, uint64_t tick);
  void SampleTarget(Target& t, uint64_t now);
  void CollectAnswers(bool wait);
  void Emit(uint64_t time_ns, uint64_t tid, int state, int cpu, uint64_t cpu_delta,
            const uint64_t* pcs, int pc_count, bool pcs_truncated, const PythonFrameRef* python,
            int python_count, bool python_truncated);

  RingPool* pool_;
  const StackCapturer* stacks_;
  PythonStackReader* python_;
  SamplerOptions options_;
  uint64_t period_ns_ = 0;
  SignalStackSampler signals_;
  bool use_signals_ = false;
  ProcFdSource fds_;
  std::unique_ptr<Target[]> targets_;
  int target_count_ = 0;
  std::vector<uint8_t> ring_memory_;
  SpscRing ring_;
  int task_dir_fd_ = -1;
  std::vector<char> dirents_;
  uint64_t self_tid_ = 0;
  // Scratch for blocked threads' Python frames (sampler thread only).
  PythonFrameRef python_scratch_[SignalSample::kMaxPython];
  // Blocked threads' native stacks (sampler thread only; Init in Start when enabled).
  BlockedStackUnwinder blocked_;
  uint64_t blocked_pcs_[130];
  // Per target (stack_depth + 1 PCs, kMaxPython frames each): the last blocked sample's stacks,
  // reused while the thread has not run since (see SampleTarget).
  std::unique_ptr<uint64_t[]> blocked_cache_;
  std::unique_ptr<PythonFrameRef[]> python_cache_;

  pthread_t thread_{};
  bool started_ = false;
  // Set (release) once Start has built the ring and the targets: the writer thread may call
  // DrainInto before or while Start runs (the sampler is registered before the writer starts).
  std::atomic<bool> ready_{false};
  std::atomic<bool> stop_{false};
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  std::atomic<uint64_t> recorded_{0}, dropped_{0}, signals_sent_{0}, late_{0}, abandoned_{0}, ticks_{0},
      blocked_unwinds_{0}, blocked_torn_{0}, blocked_reused_{0}, blocked_repeated_{0};
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_SAMPLER_SAMPLER_H_
