// How stacks read in every output (classify/stack_view.h), on trace files written with
// TraceBuilder: a Python program whose idle gaps end in calls made from the same code, once
// walked through the interpreter from _start and once unwound only as far as `<module>` (a thread
// blocked in the kernel), at two lines of load_batch; and a C++ program calling through a
// stripped library whose PCs differ from call to call. The top stacks, the caller -> callee tree
// and the collapsed (flame graph) export agree: one stack, one root; the Chrome export's resume
// sites are the report's.
#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "analyzer/analysis/analyze_traces.h"
#include "analyzer/export/chrome_export.h"
#include "analyzer/export/collapsed_stacks.h"
#include "analyzer/json/json_value.h"
#include "analyzer/summary/summarize_trace.h"
#include "analyzer/testing/trace_files.h"
#include "gtest/gtest.h"
#include "proto/testing/trace_builder.h"

namespace gs::analyzer {
namespace {

namespace tr = gpustall::trace;
using gs::trace::testing::TraceBuilder;

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/stack_view_" + std::to_string(getpid()) + "_" + name;
}

// `steps` gaps of 20 ms, each ended by a cudaMemcpyAsync made from stacks[step % size].
tr::TraceHeader Header(const std::vector<std::string>& command_line, const std::string& executable) {
  tr::TraceHeader h;
  h.set_pid(7);
  for (const std::string& arg : command_line) h.add_command_line(arg);
  h.set_executable(executable);
  h.mutable_capture()->set_mode(tr::CAPTURE_MODE_CUPTI);
  h.mutable_capture()->set_native_stacks(true);
  h.mutable_capture()->set_python_stacks(true);
  h.add_devices()->set_name("Simulated GPU");
  return h;
}

// The collapsed export's lines, each split into its frames (root first).
std::vector<std::vector<std::string>> Collapsed(const Analysis& a) {
  std::ostringstream out;
  WriteCollapsedStacks(a, &out);
  std::vector<std::vector<std::string>> lines;
  for (absl::string_view line : absl::StrSplit(out.str(), '\n', absl::SkipEmpty()))
    lines.push_back(absl::StrSplit(line.substr(0, line.rfind(' ')), ';'));
  return lines;
}

constexpr char kScript[] = "/home/me/train.py";

// The Python program: its gaps end in copies made by upload() from load_batch(), from the
// CPU-bound stack (interpreter frames from _start, load_batch at line 27) in 2 of every 3 gaps,
// from the blocked one (rooted at <module>, line 29) in the others.
void WritePythonTrace(const std::string& path) {
  const std::string script = kScript;
  auto b = TraceBuilder::Create(path, Header({"python3", script}, "/usr/bin/python3.11"));
  ASSERT_NE(b, nullptr);
  const uint32_t libc = b->AddModule("/usr/lib/x86_64-linux-gnu/libc.so.6", "", 0x7f0000000000, 0x200000);
  const uint32_t python = b->AddModule("/usr/bin/python3.11", "", 0x400000, 0x400000);
  const uint32_t ffi = b->AddModule("/usr/lib/x86_64-linux-gnu/libffi.so.8", "", 0x7f2000000000, 0x100000);
  const uint32_t rt = b->AddModule("/usr/local/cuda/lib64/libcudart.so.13", "", 0x7f1000000000, 0x100000);
  const uint32_t leaf[] = {b->InternSymbolizedFrame(rt, 0x500, "cudaMemcpyAsync", "", 0),
                           b->InternFrame(ffi, 0x6f7a), b->InternPythonFrame("upload", script, 12)};
  // CPU-bound: the interpreter's frames between the Python frames and above <module>.
  const uint32_t running = b->InternStack(
      {leaf[0], leaf[1], leaf[2], b->InternSymbolizedFrame(python, 0x1000, "_PyEval_EvalFrameDefault", "", 0),
       b->InternPythonFrame("load_batch", script, 27), b->InternFrame(python, 0x1d55f3),
       b->InternSymbolizedFrame(python, 0x2000, "_PyObject_MakeTpCall", "", 0),
       b->InternPythonFrame("main", script, 52), b->InternPythonFrame("<module>", script, 70),
       b->InternSymbolizedFrame(python, 0x3000, "PyEval_EvalCode", "", 0), b->InternFrame(python, 0x251770),
       b->InternSymbolizedFrame(python, 0x4000, "Py_BytesMain", "", 0), b->InternFrame(libc, 0x2724a),
       b->InternSymbolizedFrame(libc, 0x27305, "__libc_start_main", "", 0),
       b->InternSymbolizedFrame(python, 0x20, "_start", "", 0)});
  // Unwound only as far as <module>, and at another line of load_batch.
  const uint32_t blocked = b->InternStack({leaf[0], leaf[1], leaf[2], b->InternPythonFrame("load_batch", script, 29),
                                           b->InternPythonFrame("main", script, 52),
                                           b->InternPythonFrame("<module>", script, 70)});
  testing::AddCopyLoop(b.get(), {running, blocked, running}, 9);
  ASSERT_TRUE(b->Finish());
}

TEST(StackViewE2eTest, PythonStacksAreRootedAtModuleInEveryOutput) {
  const std::string path = TempPath("python.gstrace");
  const std::string script = kScript;
  WritePythonTrace(path);
  absl::StatusOr<Analysis> a = AnalyzeTraces({path}, AllStacksOptions());
  ASSERT_TRUE(a.ok()) << a.status();
  unlink(path.c_str());

  // One stack, by function; the line is the heavier variant's (running: 2 of every 3 gaps).
  ASSERT_EQ(a->top_stacks.size(), 1u);
  const std::vector<FrameInfo>& frames = a->top_stacks[0].frames;
  ASSERT_EQ(frames.size(), 6u);
  EXPECT_EQ(frames[3].function, "load_batch");
  EXPECT_EQ(frames[3].line, 27u);
  EXPECT_EQ(frames[4].function, "main");
  EXPECT_EQ(frames.back().function, "<module>");
  EXPECT_EQ(frames[1].function, "libffi.so.8+?");  // native frames under the Python ones stay

  // The tree: <module> -> main -> load_batch -> upload, one node each.
  ASSERT_EQ(a->stack_tree.children.size(), 1u);
  const StackTreeNode* node = &a->stack_tree.children[0];
  for (const char* name : {"<module>", "main", "load_batch", "upload"}) {
    ASSERT_NE(node, nullptr);
    EXPECT_EQ(node->frame.function, name);
    EXPECT_EQ(node->inclusive_ns, a->stack_tree.inclusive_ns) << name;
    node = node->children.size() == 1 ? &node->children[0] : nullptr;
  }

  // The flame graph: one line, rooted at <module>, no interpreter frame.
  const std::vector<std::vector<std::string>> lines = Collapsed(*a);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].front(), "<module> (" + script + ":70)");
  for (const std::string& f : lines[0]) EXPECT_FALSE(absl::StrContains(f, "python3.11") || f == "_start") << f;
}

// A trace's summary (the multi-rank report's per-rank stacks) lists the same one stack.
TEST(StackViewE2eTest, SummaryStacksAreTheReportsStacks) {
  const std::string path = TempPath("summary.gstrace");
  WritePythonTrace(path);
  absl::StatusOr<RankSummary> s = SummarizeTrace(path, AnalysisOptions());
  unlink(path.c_str());
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->stacks.size(), 1u);
  EXPECT_EQ(s->stacks[0].frames,
            (std::vector<std::string>{"upload (train.py:12)", "load_batch (train.py:27)", "main (train.py:52)",
                                      "<module> (train.py:70)"}));
  EXPECT_EQ(s->stacks[0].idle_ns, s->steady_idle_ns);
}

// The C++ program: its gaps end in copies made through libjpeg, a library without symbols, at
// a different PC (and call depth) from gap to gap.
void WriteStrippedLibraryTrace(const std::string& path) {
  const std::string exe = "/home/me/decode";
  auto b = TraceBuilder::Create(path, Header({exe}, exe));
  ASSERT_NE(b, nullptr);
  const uint32_t app = b->AddModule(exe, "", 0x400000, 0x100000);
  const uint32_t jpeg = b->AddModule("/usr/lib/x86_64-linux-gnu/libjpeg.so.62", "", 0x7f3000000000, 0x100000);
  const uint32_t rt = b->AddModule("/usr/local/cuda/lib64/libcudart.so.13", "", 0x7f1000000000, 0x100000);
  const uint32_t copy = b->InternSymbolizedFrame(rt, 0x500, "cudaMemcpyAsync", "", 0);
  const uint32_t decode = b->InternSymbolizedFrame(app, 0x100, "decode_batch", "decode.cc", 40);
  const uint32_t main_fn = b->InternSymbolizedFrame(app, 0x200, "main", "decode.cc", 90);
  std::vector<uint32_t> stacks;
  for (uint64_t pc : {0x231e3, 0x23208, 0x230cb})
    stacks.push_back(b->InternStack({copy, b->InternFrame(jpeg, pc), decode, main_fn}));
  stacks.push_back(b->InternStack({copy, b->InternFrame(jpeg, 0x231e3), b->InternFrame(jpeg, 0x20000), decode, main_fn}));
  testing::AddCopyLoop(b.get(), stacks, 8);
  ASSERT_TRUE(b->Finish());
}

TEST(StackViewE2eTest, StrippedLibraryIsOneStackPerCaller) {
  const std::string path = TempPath("native.gstrace");
  WriteStrippedLibraryTrace(path);
  absl::StatusOr<Analysis> a = AnalyzeTraces({path}, AllStacksOptions());
  ASSERT_TRUE(a.ok()) << a.status();
  unlink(path.c_str());
  ASSERT_EQ(a->top_stacks.size(), 1u);
  ASSERT_EQ(a->top_stacks[0].frames.size(), 4u);
  EXPECT_EQ(a->top_stacks[0].frames[1].function, "libjpeg.so.62+?");
  EXPECT_EQ(a->top_stacks[0].frames[2].function, "decode_batch");
  EXPECT_EQ(Collapsed(*a).size(), 1u);
}

// `export --chrome` names each idle interval's resume site as the report names its resume sites:
// the stripped library's frame is "libjpeg.so.62+?", not the PC of that one call.
TEST(StackViewE2eTest, ChromeResumeSiteIsTheReportsSite) {
  const std::string path = TempPath("chrome.gstrace");
  WriteStrippedLibraryTrace(path);
  absl::StatusOr<Analysis> a = AnalyzeTraces({path});
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->intervals.resume_sites.size(), 1u);
  const std::string site = a->intervals.resume_sites[0].frame.function;
  EXPECT_EQ(site, "libjpeg.so.62+?");
  std::ostringstream out;
  absl::StatusOr<ChromeExportStats> stats = ExportChromeTrace(path, &out);
  unlink(path.c_str());
  ASSERT_TRUE(stats.ok()) << stats.status();
  absl::StatusOr<Json> root = Json::Parse(out.str());
  ASSERT_TRUE(root.ok()) << root.status();
  uint64_t idle = 0;
  for (const Json& e : (*root)["traceEvents"].items()) {
    if (e["ph"].as_string() != "X" || e["pid"].as_int() != GpuPid(0) || e["tid"].as_int() != kIdleTid) continue;
    ++idle;
    ASSERT_TRUE(e["args"].Has("resume_site")) << e.Dump(0);
    EXPECT_EQ(e["args"]["resume_site"].as_string(), site) << e.Dump(0);
    EXPECT_EQ(e["args"]["resume_call"].as_string(), "cudaMemcpyAsync");
  }
  EXPECT_EQ(idle, a->devices[0].idle_intervals);
  EXPECT_GT(idle, 0u);
}

}  // namespace
}  // namespace gs::analyzer
