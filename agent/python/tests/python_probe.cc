// python_probe.cc — test-only shared library: C entry points that capture the caller's Python
// stack with gs_python_stacks, for Python scripts calling through ctypes (CDLL: GIL released;
// PyDLL: GIL held). Built like the agent: no libpython, hidden visibility except these.
#include <dlfcn.h>
#include <execinfo.h>
#include <time.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "agent/python/python_stacks.h"
#include "agent/python/python_symbolizer.h"
#include "agent/python/stack_merge.h"

#define PROBE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

gs::PythonStackReader g_reader;  // static storage, like the agent's
std::mutex g_symbolizer_mu;      // the symbolizer is single-threaded by contract
gs::PythonSymbolizer* g_symbolizer = nullptr;
thread_local bool tl_last_truncated = false;

gs::PythonSymbolizer& Symbolizer() {
  if (g_symbolizer == nullptr) g_symbolizer = new gs::PythonSymbolizer(g_reader.code_table());
  return *g_symbolizer;
}

// Appends "file\tfunction\tline\n"; false if `cap` is too small.
bool AppendFrame(const gs::PythonFrameRef& f, std::string* out) {
  gs::PythonSymbol sym;
  Symbolizer().Symbolize(f, &sym);
  out->append(sym.filename.data(), sym.filename.size());
  out->push_back('\t');
  out->append(sym.function.data(), sym.function.size());
  out->push_back('\t');
  out->append(std::to_string(sym.line));
  out->push_back('\n');
  return true;
}

int CopyOut(const std::string& s, char* buf, int cap) {
  if (static_cast<int>(s.size()) + 1 > cap) return -1;
  std::memcpy(buf, s.c_str(), s.size() + 1);
  return 0;
}

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + ts.tv_nsec;
}

}  // namespace

// Activates (idempotent) and returns the PythonStacksState as an int.
PROBE_EXPORT int gs_probe_activate() { return static_cast<int>(g_reader.Activate()); }

PROBE_EXPORT int gs_probe_state() { return static_cast<int>(g_reader.state()); }

// Captures up to `max_frames` (<= 1024) frames and writes them, innermost first, as
// "file\tfunction\tline\n" lines into buf. Returns the frame count, or -1 if buf is too small.
PROBE_EXPORT int gs_probe_capture(char* buf, int cap, int max_frames) {
  g_reader.Activate();
  gs::PythonFrameRef frames[1024];
  if (max_frames > 1024) max_frames = 1024;
  bool truncated = false;
  const int n = g_reader.Capture(frames, max_frames, &truncated);
  tl_last_truncated = truncated;
  std::string text;
  {
    std::lock_guard<std::mutex> lock(g_symbolizer_mu);
    for (int i = 0; i < n; ++i) AppendFrame(frames[i], &text);
  }
  if (CopyOut(text, buf, cap) != 0) return -1;
  return n;
}

// Captures like gs_probe_capture, then stays inside this C call (GIL released when called
// through CDLL) until gs_probe_unpark() or `seconds` pass, so that an outside tool can look at
// the same, unchanged stack.
std::atomic<bool> g_unpark{false};
std::atomic<bool> g_parked{false};

PROBE_EXPORT int gs_probe_capture_and_park(char* buf, int cap, int max_frames, double seconds) {
  const int n = gs_probe_capture(buf, cap, max_frames);
  g_parked.store(true);
  const uint64_t deadline = NowNs() + static_cast<uint64_t>(seconds * 1e9);
  while (!g_unpark.load() && NowNs() < deadline) {
    timespec ts{0, 10 * 1000 * 1000};
    nanosleep(&ts, nullptr);
  }
  return n;
}

PROBE_EXPORT void gs_probe_unpark() { g_unpark.store(true); }

// 1 once a thread has captured and parked in gs_probe_capture_and_park.
PROBE_EXPORT int gs_probe_parked() { return g_parked.load() ? 1 : 0; }

PROBE_EXPORT int gs_probe_gil_held() {
  g_reader.Activate();
  return g_reader.GilHeldByCaller();
}

PROBE_EXPORT int gs_probe_last_truncated() { return tl_last_truncated ? 1 : 0; }

// Reads the Python frames of ANOTHER thread `tid` (a gettid() value) from this one, as the
// sampler does (FindThreadState, then CaptureThread), and writes them like gs_probe_capture.
// Returns the frame count (0: none, or the read was discarded as torn), -2 when `tid` has no
// thread state, -1 if buf is too small.
PROBE_EXPORT int gs_probe_capture_thread(long tid, char* buf, int cap, int max_frames) {
  g_reader.Activate();
  static thread_local uintptr_t tstate = 0;
  static thread_local long tstate_tid = 0;
  if (tstate == 0 || tstate_tid != tid) {
    tstate = g_reader.FindThreadState(static_cast<uint64_t>(tid));
    tstate_tid = tid;
  }
  if (tstate == 0) return -2;
  gs::PythonFrameRef frames[1024];
  if (max_frames > 1024) max_frames = 1024;
  bool truncated = false;
  const int n = g_reader.CaptureThread(tstate, static_cast<uint64_t>(tid), frames, max_frames,
                                       &truncated);
  tl_last_truncated = truncated;
  if (n < 0) {
    tstate = 0;
    return -2;
  }
  std::string text;
  {
    std::lock_guard<std::mutex> lock(g_symbolizer_mu);
    for (int i = 0; i < n; ++i) AppendFrame(frames[i], &text);
  }
  if (CopyOut(text, buf, cap) != 0) return -1;
  return n;
}

// Native + Python merged stack of this call. First line "evals E runs R python P"; then one
// line per merged frame: "py\tfile\tfunction\tline" or "native\tsymbol". Returns the line count
// of frames, or -1 if buf is too small.
PROBE_EXPORT int gs_probe_merged(char* buf, int cap) {
  g_reader.Activate();
  gs::PythonFrameRef py[512];
  const int np = g_reader.Capture(py, 512, nullptr);
  void* pcs[512];
  const int nn = backtrace(pcs, 512);
  gs::NativeFrameKind kinds[512];
  int evals = 0;
  for (int i = 0; i < nn; ++i) {
    // Caller frames hold return addresses: look up the call instruction (pc - 1).
    const uintptr_t pc = reinterpret_cast<uintptr_t>(pcs[i]) - (i > 0 ? 1 : 0);
    kinds[i] =
        g_reader.IsEvalFramePc(pc) ? gs::NativeFrameKind::kEvalFrame : gs::NativeFrameKind::kNative;
    evals += kinds[i] == gs::NativeFrameKind::kEvalFrame;
  }
  int runs = 0;
  for (int i = 0; i < np; ++i) runs += (py[i].ends_eval_run || i + 1 == np);
  gs::MergedFrame merged[1024];
  const size_t nm = gs::MergeNativeAndPythonFrames(kinds, nn, py, np, merged, 1024);
  std::string text = "evals " + std::to_string(evals) + " runs " + std::to_string(runs) +
                     " python " + std::to_string(np) + "\n";
  std::lock_guard<std::mutex> lock(g_symbolizer_mu);
  for (size_t i = 0; i < nm; ++i) {
    if (merged[i].is_python) {
      text += "py\t";
      AppendFrame(py[merged[i].index], &text);
    } else {
      Dl_info info;
      const char* name = "?";
      if (dladdr(pcs[merged[i].index], &info) != 0 && info.dli_sname != nullptr)
        name = info.dli_sname;
      text += "native\t";
      text += name;
      text += kinds[merged[i].index] == gs::NativeFrameKind::kEvalFrame ? "\t(eval)\n" : "\n";
    }
  }
  if (CopyOut(text, buf, cap) != 0) return -1;
  return static_cast<int>(nm);
}

uint64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + ts.tv_nsec;
}

// Mean cost in ns of one Capture of up to `max_frames` frames (no symbolization), over
// `iterations` calls after one warm-up call. Writes the captured depth to *depth. Measured in
// this thread's CPU time: on a shared, oversubscribed machine wall time mostly measures the
// other tenants.
PROBE_EXPORT double gs_probe_bench(int iterations, int max_frames, int* depth) {
  g_reader.Activate();
  gs::PythonFrameRef frames[1024];
  if (max_frames > 1024) max_frames = 1024;
  *depth = g_reader.Capture(frames, max_frames, nullptr);
  const uint64_t start = ThreadCpuNs();
  for (int i = 0; i < iterations; ++i) {
    g_reader.Capture(frames, max_frames, nullptr);
    asm volatile("" ::: "memory");
  }
  return static_cast<double>(ThreadCpuNs() - start) / (iterations > 0 ? iterations : 1);
}

// "truncated T torn N faults F interned I table_full X arena_full A unreadable U"
PROBE_EXPORT void gs_probe_stats(char* buf, int cap) {
  const gs::PythonStackStats s = g_reader.stats();
  std::snprintf(
      buf, cap,
      "truncated %llu torn %llu faults %llu interned %llu table_full %llu arena_full %llu "
      "unreadable %llu",
      static_cast<unsigned long long>(s.truncated), static_cast<unsigned long long>(s.torn),
      static_cast<unsigned long long>(s.faults),
      static_cast<unsigned long long>(s.code_table.interned),
      static_cast<unsigned long long>(s.code_table.table_full),
      static_cast<unsigned long long>(s.code_table.arena_full),
      static_cast<unsigned long long>(s.code_table.unreadable));
}
