// capture_windows.cc — window numbering, state checks and replies (see capture_windows.h).
#include "agent/control/capture_windows.h"

namespace gs {
namespace control {

bool CaptureWindows::StartWindow(std::string* facts, std::string* error) {
  if (!recording_->InThisProcess()) {
    *error = "the agent is not active in this process";
    return false;
  }
  MutexLock lock(mu_);
  const char* name = "";
  const WindowedRecording::State state = recording_->state(&name);
  if (state == WindowedRecording::State::kRecording) {
    *error = "window " + std::to_string(windows_) + " is already recording to " + recording_->trace_path();
    return false;
  }
  if (state != WindowedRecording::State::kStandby) {
    *error = std::string("profiling is ") + name + " in this process";
    return false;
  }
  const int window = windows_ + 1;
  std::string why;
  if (!recording_->BeginWindow(window, &why)) {
    *error = why;
    return false;
  }
  windows_ = window;
  *facts = "window=" + std::to_string(window) + " trace=" + recording_->trace_path();
  return true;
}

bool CaptureWindows::StopWindow(std::string* facts, std::string* error) {
  if (!recording_->InThisProcess()) {
    *error = "the agent is not active in this process";
    return false;
  }
  MutexLock lock(mu_);
  WindowedRecording::State found = WindowedRecording::State::kOther;
  const char* name = "";
  if (!recording_->StopRecording(&found, &name)) {
    *error = found == WindowedRecording::State::kStandby ? std::string("no capture window is recording")
                                                         : std::string("profiling is ") + name + " in this process";
    return false;
  }
  uint64_t bytes = 0;
  std::string write_error;
  const bool ok = recording_->EndWindowTrace(&bytes, &write_error);
  *facts = "window=" + std::to_string(windows_) + " trace=" + recording_->trace_path() +
           " bytes=" + std::to_string(bytes);
  if (!ok) *error = "trace " + recording_->trace_path() + ": " + write_error;
  return ok;
}

std::string CaptureWindows::Status() {
  const char* name = "";
  recording_->state(&name);
  std::string out = std::string("state=") + name;
  if (!recording_->InThisProcess()) return out;
  MutexLock lock(mu_);
  out += " windows=" + std::to_string(windows_);
  if (windows_ > 0) out += " trace=" + recording_->trace_path();
  return out;
}

}  // namespace control
}  // namespace gs
