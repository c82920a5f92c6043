// python_stacks_test.cc — Python frames in the agent's stacks, end to end (ctest e2e.python_stacks.*).
//
// Runs the Python ctypes workloads (tests/workloads/py) on simgpu with libgsagent.so preloaded,
// under every CPython 3.9-3.13 found in the pyenv root (a missing one SKIPs with a message), reads
// the trace back with the trace reader and checks the stacks of the planted API calls:
//   * their Python frames are exactly the interpreter's stack at the call: the function names
//     (qualified on 3.11+), the files, and the line of each call, found by searching the scripts
//     for the text of the call (never hard-coded numbers);
//   * they are merged into the native stack where the interpreter's evaluation frames were: the
//     leaf side is native (ctypes/libffi below the Python frames), the root side too (the
//     interpreter's main), and no _PyEval_EvalFrameDefault frame is left;
//   * the header says Python stacks were captured, and with which interpreter version.
// And a C++ workload under the same agent: native stacks as before, not one Python frame, and a
// header that does not claim Python stacks.
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/reader/trace_reader.h"
#include "gtest/gtest.h"

namespace {

namespace pb = gpustall::trace;

struct FrameView {
  pb::FrameKind kind;
  std::string function;
  std::string file;
  uint32_t line;
};

struct CallView {
  std::string name;
  uint64_t bytes;
  std::vector<FrameView> frames;  // leaf first
};

struct TraceView {
  pb::TraceHeader header;
  bool python_stacks = false;  // the capture info in force at the end
  std::vector<CallView> calls;
};

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// 1-based number of the only line of `path` that contains `text`; 0 (and a failure) otherwise.
int LineOf(const std::string& path, const std::string& text) {
  std::istringstream in(ReadFile(path));
  std::string line;
  int number = 0, found = 0, matches = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find(text) != std::string::npos) {
      found = number;
      ++matches;
    }
  }
  EXPECT_EQ(matches, 1) << "expected exactly one line with '" << text << "' in " << path;
  return matches == 1 ? found : 0;
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Runs `command` through sh with stdout+stderr captured; returns the exit status.
int Run(const std::string& command, std::string* output) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, p)) > 0) output->append(buffer, n);
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A fresh work folder per test, under the build tree.
std::string MakeWorkDir(const std::string& name) {
  const std::string dir = std::string(GS_E2E_WORK_DIR) + "/" + name;
  std::string ignored;
  Run("rm -rf " + Quote(dir) + " && mkdir -p " + Quote(dir + "/out"), &ignored);
  return dir;
}

// Runs `program args` with the agent preloaded, on simgpu, writing into `dir`/out/; returns the
// one trace file it wrote ("" and a failure otherwise).
std::string RunUnderAgent(const std::string& dir, const std::string& program_and_args) {
  std::string command = "cd " + Quote(dir) + " && env";
  // The test's own environment must not steer the agent.
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string var = *e;
    if (var.rfind("GS_", 0) == 0 || var.rfind("SIMGPU_", 0) == 0)
      command += " -u " + Quote(var.substr(0, var.find('=')));
  }
  command += " LD_LIBRARY_PATH=" + Quote(GS_E2E_SIMGPU_LIB) + " LD_PRELOAD=" + Quote(GS_E2E_AGENT) +
             " GS_OUTPUT=" + Quote(dir + "/out/") + " " + program_and_args;
  std::string output;
  const int status = Run(command, &output);
  EXPECT_EQ(status, 0) << command << "\n" << output;
  std::vector<std::string> traces;
  for (const std::string& name : ListDir(dir + "/out"))
    if (name.size() > 8 && name.compare(name.size() - 8, 8, ".gstrace") == 0) traces.push_back(dir + "/out/" + name);
  EXPECT_EQ(traces.size(), 1u) << "expected one trace file; output:\n" << output;
  return traces.size() == 1 ? traces[0] : "";
}

TraceView ReadTrace(const std::string& path) {
  TraceView view;
  auto opened = gs::reader::TraceReader::Open(path, nullptr);
  EXPECT_TRUE(opened.ok()) << path << ": " << opened.status();
  if (!opened.ok()) return view;
  gs::reader::TraceReader& reader = **opened;
  view.header = reader.header();
  gs::reader::ChunkEvents events;
  while (true) {
    auto more = reader.Next(&events);
    if (!more.ok() || !*more) break;
    const gs::reader::InternTables& t = reader.tables();
    for (const auto& c : events.api_calls) {
      CallView call{t.function_name(c.function), c.bytes, {}};
      for (uint32_t id : t.stack(c.stack)) {
        const pb::Frame* f = t.frame(id);
        if (f == nullptr) {
          call.frames.push_back({pb::FRAME_KIND_SYNTHETIC, "<missing>", "", 0});
          continue;
        }
        call.frames.push_back({f->kind(), t.string(f->function_id()), t.string(f->file_id()), f->line()});
      }
      view.calls.push_back(std::move(call));
    }
  }
  EXPECT_NE(reader.end(), nullptr) << path << ": the trace did not end cleanly";
  view.python_stacks = reader.capture().python_stacks();
  return view;
}

std::string Describe(const std::vector<FrameView>& frames) {
  std::string out;
  for (const FrameView& f : frames) {
    out += "\n  ";
    out += f.kind == pb::FRAME_KIND_PYTHON ? "[py] " : "[native] ";
    out += f.function.empty() ? "?" : f.function;
    if (!f.file.empty()) out += " (" + f.file + ":" + std::to_string(f.line) + ")";
  }
  return out;
}

std::string SettingValue(const pb::TraceHeader& header, const std::string& key) {
  for (const pb::KeyValue& kv : header.settings())
    if (kv.key() == key) return kv.value();
  return "";
}

// --- the interpreters -------------------------------------------------------------------------

struct Interpreter {
  std::string minor;    // "3.12"
  std::string version;  // "3.12.1" ("" when not installed)
  std::string python;   // .../bin/python3
};

Interpreter FindInterpreter(const std::string& minor) {
  Interpreter found{minor, "", ""};
  const std::string versions = std::string(GS_E2E_PYTHON_ROOT) + "/versions";
  for (const std::string& name : ListDir(versions)) {
    // 3.13.0t and the like are free-threaded builds: the reader skips them on purpose.
    if (name.rfind(minor + ".", 0) != 0 || name.back() == 't') continue;
    const std::string python = versions + "/" + name + "/bin/python3";
    if (access(python.c_str(), X_OK) == 0) found = {minor, name, python};
  }
  return found;
}

// One Python frame the stack must hold, leaf first.
struct ExpectedPythonFrame {
  std::string function;  // qualified name (3.11+); before 3.11, the part after the last '.'
  std::string file;      // script name in the workloads folder
  std::string call_text; // the source text of the call the frame was executing
};

class PythonStacks : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    interpreter_ = FindInterpreter(GetParam());
    if (interpreter_.python.empty()) {
      GTEST_SKIP() << "CPython " << GetParam() << " is not installed under " << GS_E2E_PYTHON_ROOT
                   << "/versions: skipped";
    }
  }

  // Runs `script` and checks that every call named `api` (of `bytes` bytes) carries the stack
  // `expected` merged into its native stack.
  void CheckWorkload(const std::string& script, const std::string& args, const std::string& api,
                     uint64_t bytes, const std::vector<ExpectedPythonFrame>& expected) {
    const std::string py_dir = GS_E2E_PY_DIR;
    const std::string dir = MakeWorkDir("python_stacks_" + script + "_" + interpreter_.version);
    const std::string path =
        RunUnderAgent(dir, Quote(interpreter_.python) + " " + Quote(py_dir + "/" + script) + " " + args);
    if (path.empty()) return;
    const TraceView trace = ReadTrace(path);
    EXPECT_TRUE(trace.header.capture().python_stacks()) << "header: Python stacks not captured";
    EXPECT_TRUE(trace.python_stacks) << "capture info at the end: Python stacks not captured";
    EXPECT_EQ(SettingValue(trace.header, "python_version"), interpreter_.version);

    const bool qualified = interpreter_.minor != "3.9" && interpreter_.minor != "3.10";
    std::vector<FrameView> want;
    for (const ExpectedPythonFrame& e : expected) {
      std::string function = e.function;
      if (!qualified && function.rfind('.') != std::string::npos) function = function.substr(function.rfind('.') + 1);
      const std::string file = py_dir + "/" + e.file;
      want.push_back({pb::FRAME_KIND_PYTHON, function, file, static_cast<uint32_t>(LineOf(file, e.call_text))});
    }

    int checked = 0;
    for (const CallView& call : trace.calls) {
      if (call.name != api || call.bytes != bytes) continue;
      ++checked;
      SCOPED_TRACE(api + " stack:" + Describe(call.frames));
      std::vector<size_t> python_at;
      for (size_t i = 0; i < call.frames.size(); ++i)
        if (call.frames[i].kind == pb::FRAME_KIND_PYTHON) python_at.push_back(i);
      ASSERT_EQ(python_at.size(), want.size()) << "Python frames";
      for (size_t k = 0; k < want.size(); ++k) {
        const FrameView& got = call.frames[python_at[k]];
        EXPECT_EQ(got.function, want[k].function) << "Python frame " << k;
        EXPECT_EQ(got.file, want[k].file) << "Python frame " << k;
        EXPECT_EQ(got.line, want[k].line) << "Python frame " << k << " (" << want[k].function << ")";
      }
      // Merged, not appended: native frames on both sides, the ctypes call on the leaf side,
      // and every evaluation frame replaced by the Python frames it ran.
      ASSERT_GT(python_at.front(), 0u) << "the leaf side must be native (ctypes, libffi)";
      ASSERT_LT(python_at.back() + 1, call.frames.size()) << "the root side must be native (the interpreter's main)";
      bool ctypes_below = false;
      for (size_t i = 0; i < python_at.front(); ++i) {
        const std::string& f = call.frames[i].function;
        ctypes_below |= f == "ffi_call" || f == "_ctypes_callproc";
      }
      EXPECT_TRUE(ctypes_below) << "no ctypes/libffi frame below the innermost Python frame";
      for (const FrameView& f : call.frames) EXPECT_NE(f.function, "_PyEval_EvalFrameDefault");
      if (::testing::Test::HasFailure()) break;  // one stack is enough to see what is wrong
    }
    EXPECT_GT(checked, 0) << "no " << api << " call of " << bytes << " bytes in the trace";
  }

  Interpreter interpreter_;
};

// The H2D copy of every step (data_starved.py), enqueued by the planted load_batch():
// main -> load_batch -> Runtime.memcpy_async -> Runtime.call.
TEST_P(PythonStacks, DataStarvedCopyNamesPlantedLoadBatch) {
  CheckWorkload("data_starved.py", "--steps 3 --load-ms 2 --batch-kib 64", "cudaMemcpyAsync", 64 * 1024,
                {{"Runtime.call", "cudart.py", "self.check(fname, getattr(self.lib, fname)(*args))"},
                 {"Runtime.memcpy_async", "cudart.py", "self.call(\"cudaMemcpyAsync\","},
                 {"load_batch", "data_starved.py", "rt.memcpy_async("},
                 {"main", "data_starved.py", "+= load_batch("},
                 {"<module>", "data_starved.py", "sys.exit(main())"}});
}

// The blocking loss read (sync_heavy.py): main -> read_loss -> Runtime.memcpy -> Runtime.call.
TEST_P(PythonStacks, SyncHeavyReadNamesPlantedReadLoss) {
  CheckWorkload("sync_heavy.py", "--steps 3 --log-ms 1 --width-kib 64", "cudaMemcpy", 4,
                {{"Runtime.call", "cudart.py", "self.check(fname, getattr(self.lib, fname)(*args))"},
                 {"Runtime.memcpy", "cudart.py", "self.call(\"cudaMemcpy\", "},
                 {"read_loss", "sync_heavy.py", "rt.memcpy(ctypes.addressof(loss)"},
                 {"main", "sync_heavy.py", "loss = read_loss(rt, model.loss)"},
                 {"<module>", "sync_heavy.py", "sys.exit(main())"}});
}

INSTANTIATE_TEST_SUITE_P(CPython, PythonStacks, ::testing::Values("3.9", "3.10", "3.11", "3.12", "3.13"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = "py" + info.param;
                           std::replace(name.begin(), name.end(), '.', '_');
                           return name;
                         });

// A C++ program: the same agent records native stacks only, and says so.
TEST(NotPython, CppWorkloadHasNoPythonFrames) {
  const std::string program = std::string(GS_E2E_WORKLOADS_DIR) + "/workload_data_starved";
  if (access(program.c_str(), X_OK) != 0) GTEST_SKIP() << program << " was not built (no nvcc): skipped";
  const std::string dir = MakeWorkDir("python_stacks_cpp_data_starved");
  const std::string path = RunUnderAgent(dir, Quote(program) + " --steps 3");
  if (path.empty()) return;
  const TraceView trace = ReadTrace(path);
  EXPECT_FALSE(trace.header.capture().python_stacks());
  EXPECT_FALSE(trace.python_stacks);
  EXPECT_EQ(SettingValue(trace.header, "python_version"), "");
  size_t with_stack = 0;
  bool names_main = false;
  for (const CallView& call : trace.calls) {
    if (!call.frames.empty()) ++with_stack;
    for (const FrameView& f : call.frames) {
      EXPECT_EQ(f.kind, pb::FRAME_KIND_NATIVE) << call.name << ":" << Describe(call.frames);
      names_main |= f.function == "main";
    }
  }
  EXPECT_GT(trace.calls.size(), 0u);
  EXPECT_EQ(with_stack, trace.calls.size()) << "every API call should carry its native stack";
  EXPECT_TRUE(names_main) << "no native stack names main()";
}

}  // namespace
