// In a process without CPython (this test binary does not link libpython), the reader finds
// nothing, says nothing and captures nothing.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include "agent/python/python_runtime.h"
#include "agent/python/python_stacks.h"

namespace gs {
namespace {

TEST(NotPythonTest, DetectionFindsNoInterpreter) {
  PythonRuntimeInfo info;
  char message[256];
  EXPECT_EQ(DetectPythonRuntime(&info, message, sizeof message), PythonDetectResult::kNotPython);
  EXPECT_STREQ(message, "");
}

TEST(NotPythonTest, ReaderStaysSilentAndCapturesNothing) {
  static PythonStackReader reader;
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(reader.Activate(), PythonStacksState::kNotPython);
  EXPECT_FALSE(reader.enabled());
  PythonFrameRef frames[16];
  bool truncated = true;
  EXPECT_EQ(reader.Capture(frames, 16, &truncated), 0);
  EXPECT_FALSE(truncated);
  EXPECT_EQ(reader.Activate(), PythonStacksState::kNotPython);  // idempotent
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_FALSE(reader.IsEvalFramePc(reinterpret_cast<uintptr_t>(&frames[0])));
  EXPECT_EQ(reader.GilHeldByCaller(), -1);
}

// The probe library (what ctypes loads in the Python tests), loaded into this non-Python
// process: an empty stack and no message.
TEST(NotPythonTest, ProbeLoadedIntoANonPythonProcessReturnsAnEmptyStack) {
  void* probe = dlopen(GS_PYTHON_PROBE_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(probe, nullptr) << dlerror();
  using Capture = int (*)(char*, int, int);
  auto capture = reinterpret_cast<Capture>(dlsym(probe, "gs_probe_capture"));
  ASSERT_NE(capture, nullptr);
  ::testing::internal::CaptureStderr();
  char buf[256] = "garbage";
  EXPECT_EQ(capture(buf, sizeof buf, 64), 0);
  EXPECT_STREQ(buf, "");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace gs
