// capture_windows.h — on-demand capture windows (GS_ON_DEMAND=1): what gsctl's start, stop and
// status do, as the listener's WindowController.
//
// Between windows the agent is in standby: every intercepted call passes straight through, no
// CUPTI, no writer thread, no file. A window is one complete trace of its own numbered file
// (window_path.h), from `start` to `stop` (or the listener's timer). CaptureWindows numbers the
// windows, refuses what the agent's state does not allow, and words the replies; the recording
// itself — the agent's state word, the trace, the capture source — belongs to agent/core, which
// implements WindowedRecording.
//
// Thread safety: the listener calls one method at a time; each takes the windows' lock, which the
// agent also holds while it ends recording at exit or exec (so a window never opens or closes
// half-way through that). Lock order: the windows' lock before the agent's capture-source and
// writer locks (agent/core/agent_parts.h).
#ifndef GPUSTALL_AGENT_CONTROL_CAPTURE_WINDOWS_H_
#define GPUSTALL_AGENT_CONTROL_CAPTURE_WINDOWS_H_

#include <cstdint>
#include <string>

#include "agent/control/control_socket.h"
#include "agent/core/mutex.h"

namespace gs {
namespace control {

// The agent's side of a window. BeginWindow, StopRecording, EndWindowTrace and trace_path are
// called with the windows' lock held; InThisProcess and state may be called without it.
class WindowedRecording {
 public:
  enum class State { kStandby, kRecording, kOther };

  virtual ~WindowedRecording() = default;
  // False when the agent has no recording in this process (a forked child before it activates).
  virtual bool InThisProcess() = 0;
  // The agent's state now; *name as replies spell it ("standby", "recording", "disabled", ...).
  virtual State state(const char** name) = 0;
  // The trace file being (or last) written.
  virtual std::string trace_path() = 0;
  // Standby -> recording window `window` (1, 2, ...) into its own trace. False with *why, the
  // agent still in standby and nothing of the window left behind.
  virtual bool BeginWindow(int window, std::string* why) = 0;
  // Recording -> standby, as one atomic step; false, with the state it found, when not recording.
  virtual bool StopRecording(State* found, const char** name) = 0;
  // After StopRecording: ends the window's trace. *bytes: its size; false with *error when the
  // trace could not be written completely.
  virtual bool EndWindowTrace(uint64_t* bytes, std::string* error) = 0;
};

class CaptureWindows final : public WindowController {
 public:
  // `recording` and `mu` must outlive this object (the agent never frees either).
  CaptureWindows(WindowedRecording* recording, Mutex* mu) : recording_(recording), mu_(mu) {}

  bool StartWindow(std::string* facts, std::string* error) override;
  bool StopWindow(std::string* facts, std::string* error) override;
  std::string Status() override;

 private:
  WindowedRecording* const recording_;
  Mutex* const mu_;
  int windows_ GS_GUARDED_BY(mu_) = 0;  // windows opened so far
};

}  // namespace control
}  // namespace gs

#endif  // GPUSTALL_AGENT_CONTROL_CAPTURE_WINDOWS_H_
