// capture_thread_state.cc
#include "agent/capture/capture_thread_state.h"

namespace gs {

CaptureThreadState& ThisThreadCaptureState() {
  // Trivially constructible and destructible: zero-initialised TLS, no guard, no TLS destructor.
  static thread_local CaptureThreadState state;
  return state;
}

}  // namespace gs
