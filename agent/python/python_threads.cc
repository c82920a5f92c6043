// python_threads.cc — another thread's Python frames, for the sampler (python_stacks.h).
//
// Why a list walk and not PyGILState_GetThisThreadState: that reads the CALLING thread's TLS.
// A sampler reading a thread that is blocked in a system call cannot run code on it (a signal
// would interrupt the call: EINTR), so it finds the thread's PyThreadState in the interpreter's
// own list, the way py-spy and austin do from outside, but in-process with guarded loads.
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/python/fault_guard.h"
#include "agent/python/python_stacks.h"
#include "agent/python/raw_memory.h"

namespace gs {
namespace {

// One guarded load of `size` (4 or 8) bytes at `address`; false if it faulted. Kept out of line
// so that no caller's locals live across the sigsetjmp.
__attribute__((noinline)) bool GuardedLoad(uintptr_t address, int size, uint64_t* out) {
  if (!PlausibleAddress(address)) return false;
  volatile uint64_t value = 0;
  volatile bool ok = false;
  FaultScope scope;
  FaultScopeBegin(&scope);
  if (sigsetjmp(scope.env, 0) == 0) {
    FaultScopeArm(&scope);
    value = size == 4 ? static_cast<uint64_t>(LoadAt<uint32_t>(address, 0)) : LoadAt<uint64_t>(address, 0);
    ok = true;
    FaultScopeEnd(&scope);
  }
  *out = value;
  return ok;
}

// glibc keeps the kernel tid inside struct pthread (what a pthread_t points to). Its offset is
// not public: find it once in the calling thread's own struct (the first int equal to its tid
// within the first 2 KiB; 0x2d0 on current x86-64 glibc). -2: not found.
__attribute__((noinline)) int FindPthreadTidOffset() {
  const auto self = static_cast<uintptr_t>(pthread_self());
  const auto tid = static_cast<uint32_t>(syscall(SYS_gettid));
  for (int off = 0; off < 2048; off += 4) {
    uint64_t v = 0;
    if (!GuardedLoad(self + static_cast<uintptr_t>(off), 4, &v)) return -2;
    if (static_cast<uint32_t>(v) == tid) return off;
  }
  return -2;
}

}  // namespace

bool PythonStackReader::ThreadStateNames(uintptr_t tstate, uint64_t tid) {
  const PythonLayout& l = runtime_.layout;
  if (!PlausibleObject(tstate)) return false;
  uint64_t v = 0;
  if (l.ts_native_thread_id != kNoField) {
    return GuardedLoad(tstate + static_cast<uintptr_t>(l.ts_native_thread_id), 8, &v) && v == tid;
  }
  int tid_offset = pthread_tid_offset_.load(std::memory_order_relaxed);
  if (tid_offset == -1) {
    tid_offset = FindPthreadTidOffset();
    pthread_tid_offset_.store(tid_offset, std::memory_order_relaxed);
  }
  if (tid_offset < 0) return false;
  uint64_t pthread = 0;
  if (!GuardedLoad(tstate + static_cast<uintptr_t>(l.ts_thread_id), 8, &pthread) || !PlausibleObject(pthread))
    return false;
  return GuardedLoad(pthread + static_cast<uintptr_t>(tid_offset), 4, &v) && static_cast<uint32_t>(v) == tid;
}

uintptr_t PythonStackReader::FindThreadState(uint64_t tid) {
  if (!enabled()) return 0;
  const PythonLayout& l = runtime_.layout;
  if (runtime_.py_runtime == 0 || l.runtime_interpreters_head == kNoField ||
      l.interp_threads_head == kNoField || l.ts_next == kNoField) {
    return 0;
  }
  // The main interpreter only: sub-interpreters are rare in training jobs. Lists are short (one
  // entry per Python thread); a cycle or a torn pointer ends the walk at the cap.
  uint64_t interp = 0, ts = 0;
  if (!GuardedLoad(runtime_.py_runtime + static_cast<uintptr_t>(l.runtime_interpreters_head), 8, &interp) ||
      !PlausibleObject(interp) ||
      !GuardedLoad(interp + static_cast<uintptr_t>(l.interp_threads_head), 8, &ts)) {
    return 0;
  }
  for (int i = 0; i < 1024 && PlausibleObject(ts); ++i) {
    if (ThreadStateNames(ts, tid)) return ts;
    if (!GuardedLoad(ts + static_cast<uintptr_t>(l.ts_next), 8, &ts)) return 0;
  }
  return 0;
}

int PythonStackReader::CaptureThread(uintptr_t tstate, uint64_t tid, PythonFrameRef* out,
                                     int max_frames, bool* truncated) {
  if (truncated != nullptr) *truncated = false;
  // Only once the layout was confirmed on a live thread (kActive): a pending check needs a
  // thread's own TLS, which a sampler does not have.
  if (state_.load(std::memory_order_acquire) != PythonStacksState::kActive || max_frames <= 0)
    return 0;
  if (!ThreadStateNames(tstate, tid)) return -1;
  WalkEnd end;
  const int n = Walk(tstate, out, max_frames, &end);
  if (n > 0 && end != WalkEnd::kTorn) {
    // The second walk: a thread that ran meanwhile may have left a chain that still ends at its
    // bottom but mixes two moments (a slot reused by the next call); the same frames twice
    // mean the read did not straddle a change. The sampler's thread, so the copy may be on the
    // stack.
    PythonFrameRef again[kMaxRemoteCheckFrames];
    WalkEnd end_again;
    const int check = n < kMaxRemoteCheckFrames ? n : kMaxRemoteCheckFrames;
    const int m = Walk(tstate, again, check, &end_again);
    bool same = m == check;
    for (int i = 0; same && i < check; ++i) {
      same = again[i].code_id == out[i].code_id && again[i].addrq == out[i].addrq &&
             again[i].ends_eval_run == out[i].ends_eval_run;
    }
    if (same && check == n) same = end_again == end;
    if (!same) end = WalkEnd::kTorn;
  }
  return Finish(n, end, truncated);
}

}  // namespace gs
