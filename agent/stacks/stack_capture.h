// stack_capture.h — native return addresses of the calling thread, on the hot path.
//
// Two methods (GS_STACKS):
//   unwind  libunwind's unw_backtrace (CFI-based, x86-64 fast tracer with a per-thread cache):
//           correct without frame pointers, ~10 ns/frame once warm.
//   fp      frame-pointer walk, ~2 ns/frame; every read is bounds-checked against the thread's
//           stack range, so a frame without a frame pointer ends the walk instead of faulting.
//
// libunwind is linked in statically (third_party/: a PIC, hidden-visibility build of Debian's
// libunwind source, local unwinding only, without the weak `backtrace` alias), so every symbol of
// it stays inside libgsagent.so and the application's own libunwind, if any, is never touched.
//
// Known first-call costs (once per thread, not per call): libunwind maps its per-thread cache
// with mmap on a thread's first unw_backtrace; the fp method reads the thread's stack bounds with
// pthread_getattr_np when the thread claims its ring (ring_recorder.cc).
//
// Thread safety: Init once (activation) before any Capture; Capture from any thread.
#ifndef GPUSTALL_AGENT_STACKS_STACK_CAPTURE_H_
#define GPUSTALL_AGENT_STACKS_STACK_CAPTURE_H_

#include <cstdint>
#include <string>

#include "agent/core/config/config.h"

namespace gs {

class StackCapturer {
 public:
  // Prepares `mode`. Returns the method actually used (today always `mode`; *note is kept for a
  // method that can degrade).
  StackMode Init(StackMode mode, std::string* note);
  StackMode mode() const { return mode_; }
  const char* method_name() const;

  // Writes up to `max` return addresses into `pcs`, innermost first, and returns the count.
  // With skip=0, pcs[0] is the return address of the call to Capture (a PC in the function that
  // called Capture); each unit of `skip` drops one more frame. `stack_low`/`stack_high` bound the
  // calling thread's stack (kFramePointer only; 0/0 means unknown and gives 0 frames rather than a
  // guess). Never allocates, locks or faults (kUnwind: after the thread's first call).
  __attribute__((noinline)) int Capture(uint64_t* pcs, int max, int skip, uintptr_t stack_low,
                                        uintptr_t stack_high) const;

  // The frame-pointer walker alone (tests, benchmark). Same conventions: skip=0 gives a PC in
  // the function that called WalkFramePointers first.
  __attribute__((noinline)) static int WalkFramePointers(uint64_t* pcs, int max, int skip,
                                                         uintptr_t stack_low, uintptr_t stack_high);

  // The calling thread's stack range from pthread_getattr_np (allocates; slow path only).
  static bool CurrentThreadStackBounds(uintptr_t* low, uintptr_t* high);

 private:
  StackMode mode_ = StackMode::kNone;
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_STACKS_STACK_CAPTURE_H_
