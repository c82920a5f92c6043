// ViewStack (stack_view.h) on stacks as the agent records them: a CPU-bound Python sample walked
// through the interpreter, a blocked thread's stack that starts at `<module>`, a stripped library.
#include "analyzer/classify/stack_view.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace gs::analyzer {
namespace {

constexpr char kPython[] = "/usr/bin/python3.11";
constexpr char kLibc[] = "/usr/lib/x86_64-linux-gnu/libc.so.6";
constexpr char kScript[] = "/home/me/train.py";

FrameInfo Native(const std::string& function, const std::string& module) { return FrameInfo{function, "", 0, module}; }
FrameInfo Py(const std::string& function, uint32_t line, const std::string& file = kScript) {
  return FrameInfo{function, file, line, ""};
}

std::vector<std::string> Names(const std::vector<FrameInfo>& frames) {
  std::vector<std::string> out;
  for (const FrameInfo& f : frames) out.push_back(f.function);
  return out;
}

using Names_ = std::vector<std::string>;

// A CPU-bound sample: the interpreter's frames above `<module>`, between the Python frames and
// under them go; the native frames of the extension the innermost Python frame called stay.
TEST(StackViewTest, PythonStackIsRootedAtModuleWithoutInterpreterFrames) {
  const std::vector<FrameInfo> stack = {
      Native("decode_mcu", "/usr/lib/libjpeg.so.62"),
      Native("ImagingJpegDecode", "/venv/lib/python3.11/site-packages/PIL/_imaging.cpython-311.so"),
      Native("_PyEval_EvalFrameDefault", kPython),
      Py("load_batch", 26),
      Native("python3.11+0x1d55f3", kPython),
      Native("_PyObject_MakeTpCall", "/usr/lib/libpython3.11.so.1.0"),
      Py("main", 60),
      Py("<module>", 77),
      Native("PyEval_EvalCode", kPython),
      Native("python3.11+0x251770", kPython),
      Native("Py_BytesMain", kPython),
      Native("libc.so.6+0x2724a", kLibc),
      Native("__libc_start_main", kLibc),
      Native("_start", kPython)};
  EXPECT_EQ(Names(ViewStack(stack)), (Names_{"decode_mcu", "ImagingJpegDecode", "load_batch", "main", "<module>"}));
}

// A blocked thread unwound only as far as `<module>` reads the same as a CPU-bound one.
TEST(StackViewTest, BlockedAndRunningSamplesOfOneLineAreOneStack) {
  const std::vector<FrameInfo> blocked = {Native("clock_nanosleep", kLibc), Py("load_batch", 26), Py("main", 60),
                                          Py("<module>", 77)};
  const std::vector<FrameInfo> running = {Native("clock_nanosleep", kLibc), Native("time_sleep", kPython),
                                          Py("load_batch", 26),             Native("_PyEval_EvalFrameDefault", kPython),
                                          Py("main", 60),                   Py("<module>", 77),
                                          Native("Py_RunMain", kPython),    Native("_start", kPython)};
  EXPECT_EQ(Names(ViewStack(running)), (Names_{"clock_nanosleep", "load_batch", "main", "<module>"}));
  EXPECT_EQ(ViewStack(running), ViewStack(blocked));
  // Python code running in the interpreter: the time is the Python line's.
  EXPECT_EQ(Names(ViewStack({Native("PyNumber_Multiply", kPython), Native("python3.11+0x1d55f3", kPython),
                             Py("cpu_work", 64), Native("_start", kPython)})),
            (Names_{"cpu_work"}));
}

// `python -m pkg.train`: runpy's frames above the main module's `<module>` go (both the frozen
// module of 3.11+ and runpy.py of older versions), so the program is rooted at its `<module>` as
// a script is; runpy called from the program's own code stays where it is.
TEST(StackViewTest, RunpyFramesAboveTheMainModuleGo) {
  const std::string mod = "/home/me/pkg/train.py";
  const std::vector<FrameInfo> frozen = {Native("clock_nanosleep", kLibc),
                                         Py("load_batch", 26, mod),
                                         Py("<module>", 77, mod),
                                         Native("_PyEval_EvalFrameDefault", kPython),
                                         Py("_run_code", 88, "<frozen runpy>"),
                                         Py("_run_module_as_main", 198, "<frozen runpy>"),
                                         Native("Py_RunMain", kPython),
                                         Native("_start", kPython)};
  EXPECT_EQ(Names(ViewStack(frozen)), (Names_{"clock_nanosleep", "load_batch", "<module>"}));
  const std::vector<FrameInfo> source = {Py("load_batch", 26, mod), Py("<module>", 77, mod),
                                         Py("_run_code", 86, "/usr/lib/python3.10/runpy.py"),
                                         Py("_run_module_as_main", 196, "/usr/lib/python3.10/runpy.py")};
  EXPECT_EQ(Names(ViewStack(source)), (Names_{"load_batch", "<module>"}));
  // The blocked thread unwound only as far as `<module>` is the same stack.
  EXPECT_EQ(ViewStack(frozen), ViewStack({Native("clock_nanosleep", kLibc), Py("load_batch", 26, mod),
                                          Py("<module>", 77, mod)}));
  // runpy.run_path from the program's own code: its frames are between two of the program's.
  const std::vector<FrameInfo> nested = {Py("<module>", 3, "/home/me/plugin.py"),
                                         Py("_run_code", 88, "<frozen runpy>"),
                                         Py("run_path", 287, "<frozen runpy>"),
                                         Py("load_plugin", 12),
                                         Py("<module>", 40)};
  EXPECT_EQ(Names(ViewStack(nested)), Names(nested));
  // Only runpy's frames (the main module not reached yet): nothing to root them at, they stay.
  const std::vector<FrameInfo> importing = {Py("_get_module_details", 140, "<frozen runpy>"),
                                            Py("_run_module_as_main", 189, "<frozen runpy>")};
  EXPECT_EQ(Names(ViewStack(importing)), Names(importing));
}

// A Python thread: everything above its outermost Python frame (the interpreter's thread
// bootstrap, start_thread, clone) goes, so it is rooted at its first Python function.
TEST(StackViewTest, ThreadStackIsRootedAtItsOutermostPythonFrame) {
  const std::vector<FrameInfo> stack = {Py("work", 10), Py("Thread.run", 975, "/usr/lib/python3.11/threading.py"),
                                        Native("thread_run", kPython), Native("pythread_wrapper", kPython),
                                        Native("start_thread", kLibc), Native("clone3", kLibc)};
  EXPECT_EQ(Names(ViewStack(stack)), (Names_{"work", "Thread.run"}));
}

// A native library's thread calling into Python (a backward hook on torch's autograd engine
// thread): the library's frames stay above the Python ones, the thread's entry goes.
TEST(StackViewTest, NativeThreadCallingIntoPythonKeepsItsCaller) {
  const std::string torch = "/venv/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so";
  const std::vector<FrameInfo> stack = {Py("hook", 7), Native("_PyObject_Call", kPython),
                                        Native("torch::autograd::Engine::thread_main", torch),
                                        Native("libstdc++.so.6+0xdbad3", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"),
                                        Native("start_thread", kLibc), Native("clone3", kLibc)};
  EXPECT_EQ(Names(ViewStack(stack)), (Names_{"hook", "torch::autograd::Engine::thread_main"}));
}

// Native frames of a program that embeds Python are its own code, not the interpreter's.
TEST(StackViewTest, EmbeddingProgramsFramesStay) {
  FrameInfo run = Native("RunScript", "/opt/app/bin/server");
  const std::vector<FrameInfo> stack = {Py("handler", 5), Native("PyEval_EvalCode", "/usr/lib/libpython3.11.so.1.0"),
                                        run, Native("__libc_start_main", kLibc)};
  EXPECT_EQ(Names(ViewStack(stack)), (Names_{"handler", "RunScript"}));
}

// Without a Python frame nothing is folded (a C++ program, the interpreter's own shutdown).
TEST(StackViewTest, NativeStacksKeepTheirFrames) {
  const std::vector<FrameInfo> stack = {Native("PyGC_Collect", kPython), Native("Py_FinalizeEx", kPython),
                                        Native("Py_BytesMain", kPython), Native("__libc_start_main", kLibc)};
  EXPECT_EQ(Names(ViewStack(stack)), Names(stack));
}

// A stripped library: one bucket per caller, whatever PCs were sampled and however deep its
// internal calls went.
TEST(StackViewTest, UnsymbolisedFramesOfOneModuleAreOneBucketPerCaller) {
  const std::string jpeg = "/usr/lib/x86_64-linux-gnu/libjpeg.so.62";
  const std::vector<FrameInfo> a = {Native("libjpeg.so.62+0x231e3", jpeg), Native("libjpeg.so.62+0x23208", jpeg),
                                    Native("ImagingJpegDecode", "/pil/_imaging.so"), Py("decode", 12)};
  const std::vector<FrameInfo> b = {Native("libjpeg.so.62+0x230cb", jpeg), Native("ImagingJpegDecode", "/pil/_imaging.so"),
                                    Py("decode", 12)};
  EXPECT_EQ(Names(ViewStack(a)), (Names_{"libjpeg.so.62+?", "ImagingJpegDecode", "decode"}));
  EXPECT_EQ(ViewStack(a), ViewStack(b));
  // A named frame keeps its name; "+0x" inside a symbol that is not a PC suffix is not a PC.
  EXPECT_EQ(ViewStack({Native("jpeg_read_scanlines", jpeg)})[0].function, "jpeg_read_scanlines");
  EXPECT_EQ(ViewStack({Native("f+0xzz", jpeg)})[0].function, "f+0xzz");
}

TEST(StackViewTest, IdentityIsTheFunctionNotTheLine) {
  EXPECT_EQ(FrameIdentity(Py("main", 60)), FrameIdentity(Py("main", 70)));
  EXPECT_NE(FrameIdentity(Py("main", 60)), FrameIdentity(Py("main", 60, "/home/me/other.py")));
  EXPECT_EQ(FrameIdentity(FrameInfo{"decode", "jdhuff.c", 10, "/lib/libjpeg.so"}),
            FrameIdentity(FrameInfo{"decode", "jdhuff.c", 99, "/lib/libjpeg.so"}));
  EXPECT_NE(FrameIdentity(Native("decode", "/lib/a.so")), FrameIdentity(Native("decode", "/lib/b.so")));
}

}  // namespace
}  // namespace gs::analyzer
