// python_stacks.h — the Python frames of the calling thread, read without the GIL.
//
// Public interface of agent/python (library gs_python_stacks). How the agent uses it:
//
//   At activation (agent start-up or first intercepted call; not on the hot path):
//       static PythonStackReader reader;            // static storage, never destroyed
//       reader.Activate(options);                   // dlsym, mmap, sigaction; idempotent
//     In a process that is not CPython this finds no symbols, prints nothing, and every later
//     Capture returns 0 at the cost of one atomic load. Unsupported versions, free-threaded
//     builds and layout mismatches disable it with ONE log line ("gpustall: ...").
//
//   On the hot path (application thread, inside an intercepted CUDA call, GIL held or not):
//       PythonFrameRef frames[kMax];
//       int n = reader.Capture(frames, kMax, &truncated);   // innermost frame first
//     No malloc, no lock, no syscall, no call into the interpreter except
//     PyGILState_GetThisThreadState() (a TLS read). Copy the n 8-byte refs into the record.
//     The first Capture on a thread with Python frames validates the layout on that thread
//     (once per process: one gettid() syscall; on failure it logs one line and disables).
//     Cost (tests/probe_bench.py: distinct functions, thread CPU time, shared 2-core VM):
//     0.57-0.67 us at depth 20 and 1.45-1.75 us at depth 50 (~30 ns/frame), 3.9-3.13.
//
//   On the writer thread (or any single thread): PythonSymbolizer turns refs into (file,
//   function, line); code ids stay valid for the life of the process. To merge with a native
//   stack of the same capture, classify each native PC with IsEvalFramePc and call
//   MergeNativeAndPythonFrames (stack_merge.h).
//
// Thread safety: every member function may be called from any thread at any time.
// Fork: nothing to reset. The child inherits the tables, the guard and its thread's state.
// Exit: no destructor runs (trivially destructible); captures racing with exit stay valid.
// Signals: Capture is async-signal-safe once Activate has returned (no locks, no allocation,
// initial-exec TLS), so a sampler may call it from a signal handler on the sampled thread.
#ifndef GPUSTALL_AGENT_PYTHON_PYTHON_STACKS_H_
#define GPUSTALL_AGENT_PYTHON_PYTHON_STACKS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "agent/python/code_table.h"
#include "agent/python/python_runtime.h"

namespace gs {

// One captured Python frame: raw, symbolized later. 8 bytes, trivially copyable into rings.
struct PythonFrameRef {
  uint32_t code_id : 31;       // PythonCodeTable id; 0: a frame whose code could not be stored
  uint32_t ends_eval_run : 1;  // outermost frame run by one _PyEval_EvalFrameDefault activation
  int32_t addrq;               // byte offset of the current instruction (-1/-2: not started)
};
static_assert(sizeof(PythonFrameRef) == 8, "PythonFrameRef is a fixed-size record");

enum class PythonStacksState : uint8_t {
  kInactive = 0,            // Activate not called yet
  kActivating = 1,          // another thread is inside Activate
  kNotPython = 2,           // not a CPython process (silent)
  kUnsupported = 3,         // CPython outside 3.9-3.13 (logged)
  kFreeThreaded = 4,        // Py_GIL_DISABLED build (logged)
  kLayoutMismatch = 5,      // static or per-thread validation failed (logged)
  kNoMemory = 6,            // could not map the code table (logged)
  kPendingThreadCheck = 7,  // active; layout not yet confirmed on a live Python thread
  kActive = 8,
};

struct PythonStackStats {
  uint64_t truncated = 0;  // captures cut short (depth limit, invalid frame, fault, cycle)
  uint64_t torn = 0;       // reads discarded: the chain changed while it was read (below)
  uint64_t faults = 0;     // faults absorbed by the read guard (process-wide)
  PythonCodeTableStats code_table;
};

class PythonStackReader {
 public:
  struct Options {
    uint32_t code_table_slots = 16384;      // distinct code objects remembered
    size_t string_arena_bytes = 16u << 20;  // file names, qualnames, line tables (lazy pages)
    // Receives each log line (no prefix, no newline). nullptr: "gpustall: <line>\n" to stderr.
    void (*log)(const char* line) = nullptr;
  };

  PythonStackReader() = default;
  PythonStackReader(const PythonStackReader&) = delete;
  PythonStackReader& operator=(const PythonStackReader&) = delete;

  // See the file comment. Returns the state after activation. Safe to call repeatedly and from
  // several threads (one does the work; the others see kActivating or the result).
  PythonStacksState Activate(const Options& options);
  PythonStacksState Activate() { return Activate(Options()); }

  PythonStacksState state() const { return state_.load(std::memory_order_acquire); }
  bool enabled() const {
    const PythonStacksState s = state();
    return s == PythonStacksState::kActive || s == PythonStacksState::kPendingThreadCheck;
  }

  // HOT PATH. Writes up to `max_frames` frames of the calling thread, innermost first, and
  // returns how many. 0 when disabled, when the thread has no Python thread state, or when it
  // runs no Python code. An unreadable frame ends the stack early (never a crash); `*truncated`
  // (optional) then says the stack is incomplete. A chain that ends before its bottom
  // (python_layout.h, "Bottom": the signal landed while this thread pushed or popped a frame)
  // gives no frames: its outer frames are unknown, and a shorter stack would stand in a flame
  // graph as a root of its own.
  int Capture(PythonFrameRef* out, int max_frames, bool* truncated = nullptr);

  // --- Other threads (the sampler; python_threads.cc) ---
  // The PyThreadState of the OS thread `tid` (gettid()), found by a guarded walk of the main
  // interpreter's thread list, or 0 (not a Python thread, not enabled, list unreadable).
  // 3.11+ match native_thread_id; 3.9/3.10 match thread_id (a pthread_t) through glibc's
  // struct pthread, whose tid field offset is found once from the calling thread's own.
  // Not async-signal-safe (it may compute that offset); call it from a sampler thread.
  uintptr_t FindThreadState(uint64_t tid);
  // The Python frames of ANOTHER thread, read from the calling thread, with every read guarded
  // and validated as for Capture. First re-checks that `tstate` still belongs to `tid` (thread
  // states are freed when threads exit). Meant for a thread blocked in a system call, whose
  // frames do not change while it is blocked. A running thread changes its chain as it is read:
  // the chain is walked twice and kept only if both walks agree and it ends at its bottom
  // (python_layout.h, "Bottom"); otherwise the read gives no frames (stats().torn). Returns -1
  // when `tstate` no longer names `tid` (look it up again), 0 when it has no frames, the read
  // was torn, or the reader is not active yet.
  int CaptureThread(uintptr_t tstate, uint64_t tid, PythonFrameRef* out, int max_frames,
                    bool* truncated = nullptr);

  // Whether the calling thread holds the GIL right now: 1 yes, 0 no (released, e.g. inside a
  // ctypes/CDLL call or a blocking C call; or waiting for it), -1 unknown (not enabled, or no
  // Python thread state). For samples: "blocked on a futex" + 0 + a thread state means the
  // thread may be waiting for the GIL. PyGILState_Check is GIL-free and lock-free.
  int GilHeldByCaller() const;

  // True if `pc` lies in _PyEval_EvalFrameDefault (pass return address - 1 for caller frames).
  // Lock-free; valid once enabled().
  bool IsEvalFramePc(uintptr_t pc) const {
    return pc >= runtime_.eval_frame_begin && pc < runtime_.eval_frame_end;
  }

  // Valid once enabled(); the table outlives every capture.
  const PythonCodeTable& code_table() const { return code_table_; }
  const PythonRuntimeInfo& runtime() const { return runtime_; }
  PythonStackStats stats() const;

 private:
  // kTorn: the chain ended (a NULL previous) before its bottom (python_layout.h, "Bottom").
  enum class WalkEnd : uint8_t { kEnd, kMaxDepth, kBadFrame, kFault, kCycle, kTorn };

  int Walk(uintptr_t tstate, PythonFrameRef* out, int max_frames, WalkEnd* end);
  int CaptureAndValidate(PythonFrameRef* out, int max_frames, bool* truncated);
  // What a capture returns after its walk: a torn walk gives nothing (counted in torn_), an
  // incomplete one its frames with `*truncated` set (counted in truncated_).
  int Finish(int n, WalkEnd end, bool* truncated);
  bool ThreadStateNames(uintptr_t tstate, uint64_t tid);
  void Disable(PythonStacksState state, const char* line);
  void Log(const char* line) const;

  std::atomic<PythonStacksState> state_{PythonStacksState::kInactive};
  PythonRuntimeInfo runtime_;
  PythonCodeTable code_table_;
  void (*log_)(const char*) = nullptr;
  std::atomic<uint64_t> truncated_{0};
  std::atomic<uint64_t> torn_{0};
  // Validation walks that were torn; at kMaxTornChecks the layout is declared wrong.
  static constexpr uint32_t kMaxTornChecks = 64;
  std::atomic<uint32_t> torn_checks_{0};
  // CaptureThread compares this many innermost frames of its two walks (the inner frames are
  // the ones a running thread changes).
  static constexpr int kMaxRemoteCheckFrames = 128;
  std::atomic<int> pthread_tid_offset_{-1};  // glibc struct pthread: offset of `tid` (3.9/3.10)
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_PYTHON_PYTHON_STACKS_H_
