// capture_thread_state.cc
#include "agent/capture/capture_thread_state.h"

namespace gs {

// Trivially constructible and destructible: zero-initialised TLS, no guard, no TLS destructor.
__attribute__((tls_model("initial-exec"))) thread_local CaptureThreadState t_capture_thread_state;

}  // namespace gs
