// stream_capture.cc
#include "agent/capture/stream_capture.h"

namespace gs::stream_capture_internal {

std::atomic<bool> g_capture_begun{false};

}  // namespace gs::stream_capture_internal
