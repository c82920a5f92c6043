// python_runtime.h — is this process running CPython, which version, and where are its fields?
//
// Detection looks the interpreter up with dlsym(RTLD_DEFAULT, ...) in the executable and the
// libraries it loaded (a statically linked python3 and libpython3.X.so both work). It only reads
// static data and calls Py_GetVersion() on versions without Py_Version; it never touches Python
// objects, so it works before Py_Initialize (LD_PRELOAD constructors) and without the GIL.
//
// Thread safety: DetectPythonRuntime may be called from any thread; it has no shared state.
#ifndef GPUSTALL_AGENT_PYTHON_PYTHON_RUNTIME_H_
#define GPUSTALL_AGENT_PYTHON_PYTHON_RUNTIME_H_

#include <cstddef>
#include <cstdint>

#include "agent/python/code_table.h"
#include "agent/python/python_layout.h"

namespace gs {

enum class PythonDetectResult : uint8_t {
  kPython = 0,              // supported CPython; `out` is filled
  kNotPython = 1,           // no CPython symbols: stay silent
  kUnsupportedVersion = 2,  // CPython, but not 3.9–3.13
  kFreeThreaded = 3,        // Py_GIL_DISABLED build
  kLayoutMismatch = 4,      // the compiled-in offsets disagree with this interpreter
};

struct PythonRuntimeInfo {
  uint32_t version_hex = 0;  // PY_VERSION_HEX
  int minor = 0;
  int micro = 0;
  PythonLayout layout;
  PyTypePointers types;
  void* (*get_this_thread_state)() = nullptr;  // PyGILState_GetThisThreadState
  int (*gil_check)() = nullptr;                // PyGILState_Check (GIL-free; 3.4+)
  uintptr_t py_runtime = 0;                    // &_PyRuntime (0 if not exported): thread lists
  uintptr_t eval_frame_begin = 0;              // _PyEval_EvalFrameDefault [begin, end)
  uintptr_t eval_frame_end = 0;
};

// Fills `out` for a supported interpreter. For every result but kPython and kNotPython, writes a
// one-line explanation (no "gpustall:" prefix, no newline) into `message`.
PythonDetectResult DetectPythonRuntime(PythonRuntimeInfo* out, char* message, size_t message_size);

}  // namespace gs

#endif  // GPUSTALL_AGENT_PYTHON_PYTHON_RUNTIME_H_
