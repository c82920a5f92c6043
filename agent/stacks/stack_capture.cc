#include "agent/stacks/stack_capture.h"

#include <libunwind.h>  // gs_libunwind_pic: static, PIC, hidden; UNW_LOCAL_ONLY comes with the target
#include <pthread.h>

#include <cstring>

namespace gs {
namespace {
constexpr int kMaxSkip = 64;
}  // namespace

StackMode StackCapturer::Init(StackMode mode, std::string* note) {
#if defined(__SANITIZE_THREAD__)
  // ThreadSanitizer builds only: libunwind frees its per-thread trace cache from a TSD destructor
  // at thread exit, after TSan has torn the thread's state down, and TSan's mutex interceptor
  // crashes there (a TSan/libunwind interaction, not a race here). Frame pointers instead, so
  // the TSan run checks everything else (tools/sanitize). Silent: the trace header's stack
  // method says "frame-pointer".
  if (mode == StackMode::kUnwind) mode = StackMode::kFramePointer;
#endif
  (void)note;
  mode_ = mode;
  // The per-thread cache needs no lock on lookup: the hot path stays lock-free after a thread's
  // first call. libunwind is linked in, so kUnwind cannot fail to initialise.
  if (mode == StackMode::kUnwind) unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  return mode_;
}

const char* StackCapturer::method_name() const {
  switch (mode_) {
    case StackMode::kUnwind: return "libunwind";
    case StackMode::kFramePointer: return "frame-pointer";
    case StackMode::kNone: return "none";
  }
  return "none";
}

int StackCapturer::Capture(uint64_t* pcs, int max, int skip, uintptr_t stack_low,
                           uintptr_t stack_high) const {
  if (max <= 0) return 0;
  if (skip < 0) skip = 0;
  if (skip > kMaxSkip) skip = kMaxSkip;
  switch (mode_) {
    case StackMode::kNone: return 0;
    case StackMode::kFramePointer:
      // +1: WalkFramePointers' own first PC is in this function.
      {
        const int n = WalkFramePointers(pcs, max, skip + 1, stack_low, stack_high);
        // Keeps this frame on the stack (no sibling call), so "skip + 1" stays right.
        __asm__ volatile("" ::: "memory");
        return n;
      }
    case StackMode::kUnwind: {
      // unw_backtrace omits itself; its first PC is in this function, hence skip + 1. It fills
      // from the start of the buffer, so capture into a scratch array and copy the tail.
      void* scratch[128 + kMaxSkip + 2];
      int want = max + skip + 1;
      if (want > static_cast<int>(sizeof(scratch) / sizeof(scratch[0])))
        want = sizeof(scratch) / sizeof(scratch[0]);
      const int got = unw_backtrace(scratch, want);
      int n = got - (skip + 1);
      if (n <= 0) return 0;
      if (n > max) n = max;
      std::memcpy(pcs, scratch + skip + 1, static_cast<size_t>(n) * sizeof(uint64_t));
      return n;
    }
  }
  return 0;
}

int StackCapturer::WalkFramePointers(uint64_t* pcs, int max, int skip, uintptr_t stack_low,
                                     uintptr_t stack_high) {
  if (stack_high == 0) return 0;
  const uintptr_t here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  // Frames live between our own frame and the top of the stack; anything else is garbage.
  uintptr_t low = here > stack_low ? here : stack_low;
  uintptr_t fp = here;
  int n = 0;
  int to_skip = skip;
  while (n < max) {
    if (fp < low || fp > stack_high - 2 * sizeof(uintptr_t) || (fp & (sizeof(uintptr_t) - 1)) != 0)
      break;
    const uintptr_t* frame = reinterpret_cast<const uintptr_t*>(fp);
    const uintptr_t next = frame[0];
    const uintptr_t ret = frame[1];
    if (ret == 0) break;
    if (to_skip > 0) {
      --to_skip;
    } else {
      pcs[n++] = ret;
    }
    if (next <= fp) break;  // stacks grow down: callers' frames are at higher addresses
    low = fp + 2 * sizeof(uintptr_t);
    fp = next;
  }
  return n;
}

bool StackCapturer::CurrentThreadStackBounds(uintptr_t* low, uintptr_t* high) {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return false;
  void* address = nullptr;
  size_t size = 0;
  const bool ok = pthread_attr_getstack(&attr, &address, &size) == 0;
  pthread_attr_destroy(&attr);
  if (!ok) return false;
  *low = reinterpret_cast<uintptr_t>(address);
  *high = *low + size;
  return true;
}

}  // namespace gs
