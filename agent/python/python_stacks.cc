// python_stacks.cc — activation, per-thread validation and the frame walk.
#include "agent/python/python_stacks.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <type_traits>

#include "agent/python/fault_guard.h"
#include "agent/python/raw_memory.h"

namespace gs {
namespace {

void LogToStderr(const char* line) {
  char buf[512];
  const int n = std::snprintf(buf, sizeof buf, "gpustall: %s\n", line);
  if (n > 0) {
    const ssize_t ignored =
        write(STDERR_FILENO, buf, n < static_cast<int>(sizeof buf) ? n : sizeof buf - 1);
    (void)ignored;
  }
}

// Compiler barrier: stores to the caller's array must not be sunk past a later load that may
// fault (a fault longjmps out and the count says the frame was written).
inline void Barrier() { asm volatile("" ::: "memory"); }

}  // namespace

// The agent keeps its reader in static storage: it must be constant-initialized (usable from
// any constructor, whatever the static initialization order) and need no destructor (threads
// may still capture while the process exits).
static_assert(std::is_trivially_destructible<PythonStackReader>::value, "no exit-time destructor");
[[maybe_unused]] constexpr PythonStackReader kConstantInitializable{};

void PythonStackReader::Log(const char* line) const { (log_ ? log_ : LogToStderr)(line); }

void PythonStackReader::Disable(PythonStacksState state, const char* line) {
  state_.store(state, std::memory_order_release);
  if (line != nullptr && line[0] != '\0') Log(line);
}

PythonStacksState PythonStackReader::Activate(const Options& options) {
  PythonStacksState expected = PythonStacksState::kInactive;
  if (!state_.compare_exchange_strong(expected, PythonStacksState::kActivating,
                                      std::memory_order_acq_rel)) {
    return expected;
  }
  log_ = options.log;
  char message[256];
  PythonRuntimeInfo info;
  switch (DetectPythonRuntime(&info, message, sizeof message)) {
    case PythonDetectResult::kPython:
      break;
    case PythonDetectResult::kNotPython:
      Disable(PythonStacksState::kNotPython, nullptr);
      return state();
    case PythonDetectResult::kUnsupportedVersion:
      Disable(PythonStacksState::kUnsupported, message);
      return state();
    case PythonDetectResult::kFreeThreaded:
      Disable(PythonStacksState::kFreeThreaded, message);
      return state();
    case PythonDetectResult::kLayoutMismatch:
      Disable(PythonStacksState::kLayoutMismatch, message);
      return state();
  }
  runtime_ = info;
  if (!code_table_.Init(options.code_table_slots, options.string_arena_bytes, info.layout,
                        info.types)) {
    Disable(PythonStacksState::kNoMemory,
            "could not map the Python code table; Python stacks disabled");
    return state();
  }
  if (!InstallFaultGuard()) {
    Disable(PythonStacksState::kNoMemory,
            "could not install the SIGSEGV read guard; Python stacks disabled");
    return state();
  }
  state_.store(PythonStacksState::kPendingThreadCheck, std::memory_order_release);
  // Validate right away if this thread already runs Python code; otherwise the first capture
  // on a Python thread does it.
  PythonFrameRef scratch[8];
  CaptureAndValidate(scratch, 8, nullptr);
  return state();
}

int PythonStackReader::Capture(PythonFrameRef* out, int max_frames, bool* truncated) {
  if (truncated != nullptr) *truncated = false;
  const PythonStacksState s = state_.load(std::memory_order_acquire);
  if (s != PythonStacksState::kActive) {
    if (s != PythonStacksState::kPendingThreadCheck) return 0;
    return CaptureAndValidate(out, max_frames, truncated);
  }
  if (max_frames <= 0) return 0;
  const uintptr_t tstate = reinterpret_cast<uintptr_t>(runtime_.get_this_thread_state());
  if (!PlausibleObject(tstate)) return 0;
  WalkEnd end;
  const int n = Walk(tstate, out, max_frames, &end);
  return Finish(n, end, truncated);
}

int PythonStackReader::Finish(int n, WalkEnd end, bool* truncated) {
  if (end == WalkEnd::kTorn) {
    torn_.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  if (end != WalkEnd::kEnd) {
    truncated_.fetch_add(1, std::memory_order_relaxed);
    if (truncated != nullptr) *truncated = true;
  }
  return n;
}

// The layout check that needs a live thread: its PyThreadState must name this thread, and its
// frame chain must lead to code objects. Runs once per process (the first thread to get here
// with Python frames); other threads capture nothing meanwhile.
int PythonStackReader::CaptureAndValidate(PythonFrameRef* out, int max_frames, bool* truncated) {
  const uintptr_t tstate = reinterpret_cast<uintptr_t>(runtime_.get_this_thread_state());
  if (!PlausibleObject(tstate) || max_frames <= 0) return 0;
  PythonStacksState expected = PythonStacksState::kPendingThreadCheck;
  if (!state_.compare_exchange_strong(expected, PythonStacksState::kActivating,
                                      std::memory_order_acq_rel)) {
    return 0;
  }
  const PythonLayout& l = runtime_.layout;
  char message[256];
  // Our own thread state is readable (we are inside a call made by this thread's Python code,
  // or before any), but the offsets might be wrong: read under the guard all the same.
  volatile bool thread_ok = false;
  FaultScope scope;
  FaultScopeBegin(&scope);
  if (sigsetjmp(scope.env, 0) == 0) {
    FaultScopeArm(&scope);
    bool ok =
        LoadAt<unsigned long>(tstate, l.ts_thread_id) == static_cast<unsigned long>(pthread_self());
    if (ok && l.ts_native_thread_id != kNoField) {
      ok = LoadAt<unsigned long>(tstate, l.ts_native_thread_id) ==
           static_cast<unsigned long>(syscall(SYS_gettid));
    }
    thread_ok = ok;
    FaultScopeEnd(&scope);
  }
  if (!thread_ok) {
    std::snprintf(message, sizeof message,
                  "CPython 3.%d.%d: PyThreadState does not match the calling thread (layout "
                  "check); Python stacks disabled",
                  runtime_.minor, runtime_.micro);
    Disable(PythonStacksState::kLayoutMismatch, message);
    return 0;
  }
  WalkEnd end;
  const int n = Walk(tstate, out, max_frames, &end);
  // A thread state without Python frames proves nothing about the frame layout, nor does a
  // chain caught mid-change (a signal that landed while the thread pushed a frame): try later.
  // A layout whose chains never reach their bottom gives up after kMaxTornChecks tries.
  const bool torn = end == WalkEnd::kTorn &&
                    torn_checks_.fetch_add(1, std::memory_order_relaxed) + 1 < kMaxTornChecks;
  if ((n == 0 && end == WalkEnd::kEnd) || torn) {
    state_.store(PythonStacksState::kPendingThreadCheck, std::memory_order_release);
    return 0;
  }
  PythonCodeInfo info;
  const bool frames_ok = n > 0 && (end == WalkEnd::kEnd || end == WalkEnd::kMaxDepth) &&
                         code_table_.Lookup(out[0].code_id, &info) && info.filename_len > 0 &&
                         info.function_len > 0;
  if (!frames_ok) {
    std::snprintf(message, sizeof message,
                  "CPython 3.%d.%d: the frame chain of the calling thread does not read as "
                  "expected (layout check); Python stacks disabled",
                  runtime_.minor, runtime_.micro);
    Disable(PythonStacksState::kLayoutMismatch, message);
    return 0;
  }
  state_.store(PythonStacksState::kActive, std::memory_order_release);
  if (truncated != nullptr) *truncated = end != WalkEnd::kEnd;
  return n;
}

int PythonStackReader::Walk(uintptr_t tstate, PythonFrameRef* out, int max_frames, WalkEnd* end) {
  const PythonLayout& l = runtime_.layout;
  const uintptr_t code_type = runtime_.types.code;
  const bool frame_objects = l.frame_model == PyFrameModel::kFrameObject;
  const int max_hops = 4 * max_frames + 64;
  volatile int n = 0;
  volatile WalkEnd why = WalkEnd::kEnd;
  FaultScope scope;
  FaultScopeBegin(&scope);
  if (sigsetjmp(scope.env, 0) == 0) {
    FaultScopeArm(&scope);
    uintptr_t frame;
    if (l.frame_model == PyFrameModel::kCFrameInterp) {
      const uintptr_t cframe = LoadAt<uintptr_t>(tstate, l.ts_frame);
      frame = PlausibleObject(cframe) ? LoadAt<uintptr_t>(cframe, l.cframe_current_frame) : 0;
    } else {
      frame = LoadAt<uintptr_t>(tstate, l.ts_frame);
    }
    // Brent's cycle detection: `tortoise` jumps to the current frame at every power of two.
    uintptr_t tortoise = frame;
    int power = 1, steps = 0, hops = 0;
    // The ids of this walk's code objects, direct-mapped by address: a code object on the chain is
    // alive while its frame is, so within one walk its address names it (recursion; PyTorch's
    // module calls, whose _call_impl frames repeat at every level of nesting), and a repeat skips
    // the code table's identity read.
    constexpr int kWalkCodes = 8;
    uintptr_t walk_codes[kWalkCodes] = {};
    uint32_t walk_ids[kWalkCodes];
    // 3.11+: a thread's chain ends at the frame its outermost _PyEval_EvalFrameDefault entered,
    // marked as such (3.11 is_entry; 3.12+ the shim that activation pushed below it). A chain
    // that ends elsewhere was read while the thread changed it (python_layout.h, "Bottom").
    const bool bottom_marked = l.owner_first_shim != kNoField || l.frame_is_entry != kNoField;
    bool at_bottom = !bottom_marked;
    // Code objects by (address, co_version) (code_table.h, "Version index"): 3.12 numbers them
    // process-wide; 3.13 per interpreter, so only while the main interpreter is the only one.
    bool by_version = l.code_version != kNoField;
    if (by_version && l.interp_next != kNoField) {
      const uintptr_t head = runtime_.py_runtime != 0 && l.runtime_interpreters_head != kNoField
                                 ? LoadAt<uintptr_t>(runtime_.py_runtime, l.runtime_interpreters_head)
                                 : 0;
      by_version = head != 0 && LoadAt<uintptr_t>(head, l.interp_next) == 0;
    }
    while (frame != 0) {
      if (!PlausibleObject(frame)) {
        why = WalkEnd::kBadFrame;
        break;
      }
      if (++hops > max_hops) {
        why = WalkEnd::kCycle;
        break;
      }
      const uintptr_t code = LoadAt<uintptr_t>(frame, l.frame_code);
      const int owner = l.frame_owner != kNoField ? LoadAt<uint8_t>(frame, l.frame_owner) : 0;
      bool emit = true;
      bool entry = frame_objects;  // 3.9/3.10: one eval activation per frame
      int32_t addrq = -1;
      if (l.owner_first_shim != kNoField && owner >= l.owner_first_shim) {
        // 3.12+: the C-stack shim pushed by _PyEval_EvalFrameDefault; the frame newer than it
        // is the outermost one that activation runs.
        emit = false;
        if (n > 0) out[n - 1].ends_eval_run = 1;
        at_bottom = true;
      } else {
        if (!PlausibleObject(code) || LoadAt<uintptr_t>(code, l.object_type) != code_type) {
          why = WalkEnd::kBadFrame;
          break;
        }
        if (frame_objects) {
          const int32_t lasti = LoadAt<int32_t>(frame, l.frame_instr);
          addrq = lasti < 0 ? -1 : lasti * l.lasti_bytes_per_unit;
        } else {
          const uintptr_t ip = LoadAt<uintptr_t>(frame, l.frame_instr);
          const intptr_t diff = static_cast<intptr_t>(ip - (code + l.code_adaptive));
          const int64_t units = LoadAt<int64_t>(code, l.var_size);
          if (diff < -2 || diff >= units * 2 || (diff & 1)) {
            why = WalkEnd::kBadFrame;
            break;
          }
          addrq = static_cast<int32_t>(diff);
          if (l.frame_is_entry != kNoField) entry = LoadAt<uint8_t>(frame, l.frame_is_entry) != 0;
          if (bottom_marked) at_bottom = l.owner_first_shim == kNoField && entry;
          // Incomplete frames (still in their prologue) are invisible to CPython's own
          // tracebacks; skip them too, keeping their entry mark on the newer frame.
          if (owner != l.owner_generator &&
              diff < 2 * static_cast<intptr_t>(LoadAt<int32_t>(code, l.code_firsttraceable))) {
            emit = false;
            if (entry && n > 0) out[n - 1].ends_eval_run = 1;
          }
        }
      }
      if (emit) {
        // Checked here, not at the top of the loop: a trailing shim still ends a run and a
        // stack of exactly max_frames frames is complete, not truncated.
        if (n >= max_frames) {
          why = WalkEnd::kMaxDepth;
          break;
        }
        PythonFrameRef& ref = out[n];
        const int memo = static_cast<int>(code >> 4) & (kWalkCodes - 1);
        if (walk_codes[memo] != code) {
          walk_codes[memo] = code;
          walk_ids[memo] = code_table_.Intern(code, by_version);
        }
        ref.code_id = walk_ids[memo];
        ref.ends_eval_run = entry ? 1 : 0;
        ref.addrq = addrq;
        Barrier();
        n = n + 1;
      }
      const uintptr_t next = LoadAt<uintptr_t>(frame, l.frame_previous);
      if (next != 0 && next == tortoise) {
        why = WalkEnd::kCycle;
        break;
      }
      if (++steps == power) {
        tortoise = next;
        power <<= 1;
        steps = 0;
      }
      frame = next;
    }
    if (why == WalkEnd::kEnd && !at_bottom) why = WalkEnd::kTorn;
    FaultScopeEnd(&scope);
  } else {
    why = WalkEnd::kFault;
  }
  const int count = n;
  if (why == WalkEnd::kEnd && count > 0) out[count - 1].ends_eval_run = 1;
  *end = why;
  return count;
}

int PythonStackReader::GilHeldByCaller() const {
  if (!enabled() || runtime_.gil_check == nullptr) return -1;
  if (!PlausibleObject(reinterpret_cast<uintptr_t>(runtime_.get_this_thread_state()))) return -1;
  return runtime_.gil_check() ? 1 : 0;
}

PythonStackStats PythonStackReader::stats() const {
  PythonStackStats s;
  s.truncated = truncated_.load(std::memory_order_relaxed);
  s.torn = torn_.load(std::memory_order_relaxed);
  s.faults = FaultGuardCaughtCount();
  s.code_table = code_table_.stats();
  return s;
}

}  // namespace gs
