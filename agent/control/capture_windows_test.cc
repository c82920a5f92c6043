// capture_windows_test.cc — window numbering, refusals and replies, over a fake recording.
#include "agent/control/capture_windows.h"

#include <gtest/gtest.h>

#include <string>

namespace gs {
namespace control {
namespace {

// A recording that does what it is told: standby until a window begins, and so on.
class FakeRecording : public WindowedRecording {
 public:
  bool in_process = true;
  State current = State::kStandby;
  const char* other_name = "disabled";
  bool begin_fails = false;
  bool write_fails = false;
  std::string path = "/runs/t.gstrace";
  int begun = 0;

  bool InThisProcess() override { return in_process; }
  State state(const char** name) override {
    *name = current == State::kRecording ? "recording" : current == State::kStandby ? "standby" : other_name;
    return current;
  }
  std::string trace_path() override { return path; }
  bool BeginWindow(int window, std::string* why) override {
    if (begin_fails) {
      *why = "cannot create trace file";
      return false;
    }
    begun = window;
    path = "/runs/t.window-" + std::to_string(window) + ".gstrace";
    current = State::kRecording;
    return true;
  }
  bool StopRecording(State* found, const char** name) override {
    if (current == State::kRecording) {
      current = State::kStandby;
      return true;
    }
    *found = current;
    state(name);
    return false;
  }
  bool EndWindowTrace(uint64_t* bytes, std::string* error) override {
    *bytes = 1234;
    if (write_fails) *error = "No space left on device";
    return !write_fails;
  }
};

struct Rig {
  FakeRecording recording;
  Mutex mu;
  CaptureWindows windows{&recording, &mu};
  std::string facts, error;
};

TEST(CaptureWindowsTest, WindowsAreNumberedAndReportTheirTrace) {
  Rig rig;
  ASSERT_TRUE(rig.windows.StartWindow(&rig.facts, &rig.error));
  EXPECT_EQ(rig.facts, "window=1 trace=/runs/t.window-1.gstrace");
  ASSERT_TRUE(rig.windows.StopWindow(&rig.facts, &rig.error));
  EXPECT_EQ(rig.facts, "window=1 trace=/runs/t.window-1.gstrace bytes=1234");
  ASSERT_TRUE(rig.windows.StartWindow(&rig.facts, &rig.error));
  EXPECT_EQ(rig.recording.begun, 2);
  EXPECT_EQ(rig.windows.Status(), "state=recording windows=2 trace=/runs/t.window-2.gstrace");
}

TEST(CaptureWindowsTest, RefusesWhatTheStateDoesNotAllow) {
  Rig rig;
  EXPECT_FALSE(rig.windows.StopWindow(&rig.facts, &rig.error));
  EXPECT_EQ(rig.error, "no capture window is recording");
  ASSERT_TRUE(rig.windows.StartWindow(&rig.facts, &rig.error));
  EXPECT_FALSE(rig.windows.StartWindow(&rig.facts, &rig.error));
  EXPECT_EQ(rig.error, "window 1 is already recording to /runs/t.window-1.gstrace");
  rig.recording.current = WindowedRecording::State::kOther;
  EXPECT_FALSE(rig.windows.StartWindow(&rig.facts, &rig.error));
  EXPECT_EQ(rig.error, "profiling is disabled in this process");
  EXPECT_FALSE(rig.windows.StopWindow(&rig.facts, &rig.error));
  EXPECT_EQ(rig.error, "profiling is disabled in this process");
  rig.recording.in_process = false;
  EXPECT_FALSE(rig.windows.StartWindow(&rig.facts, &rig.error));
  EXPECT_EQ(rig.error, "the agent is not active in this process");
  EXPECT_EQ(rig.windows.Status(), "state=disabled");
}

TEST(CaptureWindowsTest, FailuresAreReportedAndNumberNothing) {
  Rig rig;
  rig.recording.begin_fails = true;
  EXPECT_FALSE(rig.windows.StartWindow(&rig.facts, &rig.error));
  EXPECT_EQ(rig.error, "cannot create trace file");
  EXPECT_EQ(rig.windows.Status(), "state=standby windows=0");
  rig.recording.begin_fails = false;
  rig.recording.write_fails = true;
  ASSERT_TRUE(rig.windows.StartWindow(&rig.facts, &rig.error));
  EXPECT_FALSE(rig.windows.StopWindow(&rig.facts, &rig.error));
  EXPECT_EQ(rig.facts, "window=1 trace=/runs/t.window-1.gstrace bytes=1234");
  EXPECT_EQ(rig.error, "trace /runs/t.window-1.gstrace: No space left on device");
}

}  // namespace
}  // namespace control
}  // namespace gs
