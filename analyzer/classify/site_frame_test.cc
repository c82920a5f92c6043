// The site rules (site_frame.h) on stacks as the agent records them: the program's own file is
// the user's code wherever it lives, and a stack without user code is never shown by the
// process's entry frames.
#include "analyzer/classify/site_frame.h"

#include "gtest/gtest.h"

namespace gs::analyzer {
namespace {

FrameInfo Native(const std::string& function, const std::string& module) { return FrameInfo{function, "", 0, module}; }
FrameInfo Py(const std::string& function, const std::string& file, uint32_t line) {
  return FrameInfo{function, file, line, ""};
}
FrameInfo Main(FrameInfo f) {
  f.main_program = true;
  return f;
}

constexpr char kSite[] = "/venv/lib/python3.11/site-packages/gpustall/_native/workloads/";

// `gpustall demo` from a wheel: the workload's script is inside site-packages, and so is the
// helper module it imports. The script's frames are the user's; the helper's stay a package's.
TEST(SiteFrameTest, TheProgramsOwnScriptIsUserCodeInsideSitePackages) {
  const std::string script = std::string(kSite) + "data_starved.py";
  const std::vector<FrameInfo> stack = {
      Py("cpu_work", std::string(kSite) + "workload.py", 30),
      Main(Py("load_batch", script, 25)),
      Main(Py("main", script, 52)),
      Main(Py("<module>", script, 70)),
      Native("_PyEval_EvalFrameDefault", "/usr/bin/python3.11"),
      Native("libc.so.6+0x2724a", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      Native("__libc_start_main", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      Native("_start", "/usr/bin/python3.11")};
  EXPECT_EQ(SiteFrame(stack).function, "load_batch");
  EXPECT_EQ(SiteFrameIndex(stack), 1u);
  EXPECT_FALSE(IsLibraryFrame(stack[1]));
  EXPECT_TRUE(IsLibraryFrame(stack[0]));
  // The same frames without the command line's word on them: installed package code.
  FrameInfo plain = stack[1];
  plain.main_program = false;
  EXPECT_TRUE(IsLibraryFrame(plain));
}

// The standard library's extension modules are the standard library's, like its .py files.
TEST(SiteFrameTest, StandardLibraryExtensionModulesAreLibraryCode) {
  const std::vector<FrameInfo> stack = {
      FrameInfo{"f_setitem", "arraymodule.c", 508,
                "/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/array.cpython-311-x86_64-linux-gnu.so"},
      Py("cpu_work", "/home/me/workload.py", 65)};
  EXPECT_EQ(SiteFrame(stack).function, "cpu_work");
}

// No frame of the user's at all: the innermost Python frame, never libc's entry.
TEST(SiteFrameTest, NoUserFrameShowsTheInnermostPythonFrame) {
  const std::vector<FrameInfo> stack = {
      Native("_PyEval_EvalFrameDefault", "/usr/bin/python3.11"),
      Py("cpu_work", std::string(kSite) + "workload.py", 30),
      Native("libc.so.6+0x2724a", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      Native("__libc_start_main", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      Native("_start", "/usr/bin/python3.11")};
  EXPECT_EQ(SiteFrame(stack).function, "cpu_work");
}

// No Python frame either: the innermost named native frame, skipping unsymbolised addresses and
// the entry frames of the process and of threads.
TEST(SiteFrameTest, NoUserOrPythonFrameShowsTheInnermostNamedNativeFrame) {
  const std::vector<FrameInfo> stack = {
      Native("libc.so.6+0x8f2a1", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      Native("__futex_abstimed_wait_common", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      Native("start_thread", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      Native("clone3", "/usr/lib/x86_64-linux-gnu/libc.so.6")};
  EXPECT_EQ(SiteFrame(stack).function, "__futex_abstimed_wait_common");
  const std::vector<FrameInfo> entry_only = {
      Native("libc.so.6+0x2724a", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      Native("__libc_start_main", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      Native("_start", "/w/app")};
  EXPECT_EQ(SiteFrameIndex(entry_only), 0u);  // nothing else: the leaf, never an empty site
}

// A native program: its executable is the user's code even when installed in site-packages;
// its own _start is not; a libc leaf gives way to the caller.
TEST(SiteFrameTest, TheProgramsOwnExecutableIsUserCodeButNotItsEntry) {
  const std::string exe = "/venv/lib/python3.11/site-packages/tool/bin/app";
  const std::vector<FrameInfo> stack = {
      Native("__memmove_avx_unaligned_erms", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      Main(Native("pack_batch", exe)),
      Main(Native("main", exe)),
      Native("__libc_start_main", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
      Main(Native("_start", exe))};
  EXPECT_EQ(SiteFrame(stack).function, "pack_batch");
  EXPECT_TRUE(IsLibraryFrame(stack[4]));
}

}  // namespace
}  // namespace gs::analyzer
