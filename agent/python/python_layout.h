// python_layout.h — where CPython keeps the fields a frame walk reads, per minor version.
//
// A PythonLayout is plain data: byte offsets into PyThreadState, the frame structs, PyCodeObject
// and the string/bytes objects, plus the few enum values and table formats that differ between
// versions. 3.9–3.12 come from tables compiled into python_layout.cc (derived from each
// version's headers); 3.13 comes from the interpreter's own _Py_DebugOffsets, completed with the
// handful of facts the debug offsets do not carry.
//
// Thread safety: layouts are immutable after construction.
#ifndef GPUSTALL_AGENT_PYTHON_PYTHON_LAYOUT_H_
#define GPUSTALL_AGENT_PYTHON_PYTHON_LAYOUT_H_

#include <cstdint>

namespace gs {

// How a thread state reaches its innermost frame and how frames link to their callers.
enum class PyFrameModel : uint8_t {
  kFrameObject,   // 3.9, 3.10: tstate->frame, PyFrameObject.f_back, one eval call per frame
  kCFrameInterp,  // 3.11, 3.12: tstate->cframe->current_frame, _PyInterpreterFrame.previous
  kInterp,        // 3.13: tstate->current_frame, _PyInterpreterFrame.previous
};

// Which line-number table a code object carries.
enum class PyLineTableFormat : uint8_t {
  kLnotab = 1,        // 3.9 co_lnotab: (byte delta, signed line delta) pairs
  kLinetable310 = 2,  // 3.10 co_linetable (PEP 626): (byte delta, line delta, -128 = none) pairs
  kLocations = 3,     // 3.11+ co_linetable location table (PEP 657)
};

constexpr int kNoField = -1;

struct PythonLayout {
  int minor = 0;  // 3.<minor>
  PyFrameModel frame_model = PyFrameModel::kFrameObject;
  PyLineTableFormat line_format = PyLineTableFormat::kLnotab;

  // PyThreadState
  int ts_thread_id = kNoField;          // unsigned long, the pthread_t of the owning thread
  int ts_native_thread_id = kNoField;   // unsigned long, gettid() (3.11+)
  int ts_frame = kNoField;              // 3.9/3.10 frame, 3.11/3.12 cframe, 3.13 current_frame
  int cframe_current_frame = kNoField;  // _PyCFrame.current_frame (3.11/3.12)
  // The interpreter's thread list, for reading OTHER threads (the sampler): _PyRuntime →
  // interpreters.head → threads.head (tstate_head before 3.11) → PyThreadState.next.
  int runtime_interpreters_head = kNoField;
  int interp_threads_head = kNoField;
  // PyInterpreterState.next (3.13, where code versions are counted per interpreter: the code
  // table's version index is used only while the main interpreter is the only one).
  int interp_next = kNoField;
  int ts_next = kNoField;

  // Frames (PyFrameObject for kFrameObject, _PyInterpreterFrame otherwise)
  int frame_previous = kNoField;    // f_back / previous
  int frame_code = kNoField;        // f_code / f_executable
  int frame_instr = kNoField;       // f_lasti (int) / prev_instr / instr_ptr (pointer)
  int frame_owner = kNoField;       // char (3.11+)
  int frame_is_entry = kNoField;    // bool (3.11 only)
  int lasti_bytes_per_unit = 0;     // kFrameObject: f_lasti * this = byte offset (3.9: 1, 3.10: 2)
  int owner_generator = 1;          // FRAME_OWNED_BY_GENERATOR
  int owner_first_shim = kNoField;  // frames with owner >= this are C-stack shims (3.12+: 3)
  // Bottom: every activation of _PyEval_EvalFrameDefault marks the frame it enters (3.11:
  // `frame->is_entry = true`; 3.12/3.13: it links a FRAME_OWNED_BY_CSTACK `entry_frame` below
  // it, ceval.c), and a thread's first Python frame is entered by one. So a complete 3.11+ chain
  // ends at an entry frame or a shim; one that ends (previous == NULL) anywhere else was read
  // while the thread was changing it: a generator's frame just after its yield set `previous`
  // to NULL, a frame whose `previous` is not written yet. 3.9/3.10 frame objects carry no such
  // mark.

  // PyCodeObject
  int code_firstlineno = kNoField;  // int
  // uint32 co_version (3.12+): numbered from a counter at creation, never reused while the counter
  // has not wrapped (0 after that): with the address, an exact identity (code_table.h).
  int code_version = kNoField;
  int code_filename = kNoField;
  int code_name = kNoField;
  int code_qualname = kNoField;        // 3.11+; co_name before
  int code_linetable = kNoField;       // co_lnotab (3.9) / co_linetable
  int code_adaptive = kNoField;        // co_code_adaptive: instruction base (3.11+)
  int code_firsttraceable = kNoField;  // _co_firsttraceable, int, in code units (3.11+)
  int code_type_basicsize = 0;         // expected PyCode_Type.tp_basicsize
  int frame_type_basicsize = 0;        // expected PyFrame_Type.tp_basicsize (kFrameObject only)
  const char* linetable_member = "";   // PyMemberDef name of code_linetable

  // Generic objects (identical in 3.9–3.13 GIL builds)
  int object_type = 8;  // ob_type
  int var_size = 16;    // PyVarObject.ob_size (bytes length, code units for 3.11+ code)
  int bytes_data = 32;  // PyBytesObject.ob_sval
  int unicode_length = 16;
  int unicode_state = 32;        // bitfield: kind bits 2-4, compact bit 5, ascii bit 6
  int unicode_ascii_size = 0;    // sizeof(PyASCIIObject): data of compact ASCII strings
  int unicode_compact_size = 0;  // sizeof(PyCompactUnicodeObject): compact non-ASCII data
  int type_basicsize = 32;       // PyTypeObject.tp_basicsize
  int type_members = 240;        // PyTypeObject.tp_members
  int member_name = 0;           // PyMemberDef.name
  int member_offset = 16;        // PyMemberDef.offset
  int member_size = 40;          // sizeof(PyMemberDef)
};

// The compiled-in layout for CPython 3.<minor> (9–13), or nullptr. For 3.13 this is the table
// the debug offsets are checked against and completed from.
const PythonLayout* BuiltinPythonLayout(int minor);

// Fills `out` for 3.13 from the _Py_DebugOffsets at the start of _PyRuntime. Returns false (and
// a static reason in *why) if the cookie, version or free-threading flag do not fit.
bool PythonLayoutFromDebugOffsets(const void* py_runtime, uint32_t version_hex, PythonLayout* out,
                                  const char** why);

}  // namespace gs

#endif  // GPUSTALL_AGENT_PYTHON_PYTHON_LAYOUT_H_
