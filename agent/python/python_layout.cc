// python_layout.cc — per-version CPython layouts (x86-64 / aarch64 LP64, default GIL builds).
//
// How these numbers were derived: tools/derive_layouts.c was compiled against each version's own
// headers, internal ones included (pyenv 3.9.18, 3.10.13, 3.11.7, 3.12.1, 3.13.0, and Debian's
// /usr/include/python3.11 for 3.11.2, which matched 3.11.7 field for field) and printed
// offsetof() of every field below. They are constants here so that the build never depends on
// Python headers. They are not trusted blindly: python_runtime.cc checks them at activation
// against PyCode_Type's member table and basic sizes, and on the first thread it walks
// (thread id, frame types).
#include "agent/python/python_layout.h"

#include <cstddef>
#include <cstring>

namespace gs {
namespace {

PythonLayout Make39() {
  PythonLayout l;
  l.minor = 9;
  l.frame_model = PyFrameModel::kFrameObject;
  l.line_format = PyLineTableFormat::kLnotab;
  l.ts_thread_id = 176;
  l.ts_frame = 24;
  l.runtime_interpreters_head = 32;
  l.interp_threads_head = 8;  // tstate_head
  l.ts_next = 8;
  l.frame_previous = 24;
  l.frame_code = 32;
  l.frame_instr = 104;  // f_lasti, a byte offset in 3.9
  l.lasti_bytes_per_unit = 1;
  l.code_firstlineno = 40;
  l.code_filename = 104;
  l.code_name = 112;
  l.code_qualname = 112;   // no co_qualname before 3.11
  l.code_linetable = 120;  // co_lnotab
  l.code_type_basicsize = 176;
  l.frame_type_basicsize = 368;
  l.linetable_member = "co_lnotab";
  l.unicode_ascii_size = 48;
  l.unicode_compact_size = 72;
  return l;
}

PythonLayout Make310() {
  PythonLayout l = Make39();
  l.minor = 10;
  l.line_format = PyLineTableFormat::kLinetable310;
  l.frame_instr = 96;  // f_lasti, in code units since 3.10
  l.lasti_bytes_per_unit = 2;
  l.code_linetable = 120;  // co_linetable
  l.frame_type_basicsize = 360;
  l.linetable_member = "co_linetable";
  return l;
}

PythonLayout Make311() {
  PythonLayout l;
  l.minor = 11;
  l.frame_model = PyFrameModel::kCFrameInterp;
  l.line_format = PyLineTableFormat::kLocations;
  l.ts_thread_id = 152;
  l.ts_native_thread_id = 160;
  l.ts_frame = 56;  // cframe
  l.runtime_interpreters_head = 40;
  l.interp_threads_head = 16;  // threads.head
  l.ts_next = 8;
  l.cframe_current_frame = 8;
  l.frame_previous = 48;
  l.frame_code = 32;
  l.frame_instr = 56;  // prev_instr
  l.frame_owner = 69;
  l.frame_is_entry = 68;
  l.code_firstlineno = 72;
  l.code_filename = 112;
  l.code_name = 120;
  l.code_qualname = 128;
  l.code_linetable = 136;
  l.code_adaptive = 184;
  l.code_firsttraceable = 168;
  l.code_type_basicsize =
      184;  // code objects are var-sized: basicsize == offsetof(co_code_adaptive)
  l.linetable_member = "co_linetable";
  l.unicode_ascii_size = 48;
  l.unicode_compact_size = 72;
  return l;
}

PythonLayout Make312() {
  PythonLayout l = Make311();
  l.minor = 12;
  l.ts_thread_id = 136;
  l.ts_native_thread_id = 144;
  l.interp_threads_head = 72;
  l.cframe_current_frame = 0;
  l.frame_previous = 8;
  l.frame_code = 0;
  l.frame_owner = 70;
  l.frame_is_entry = kNoField;  // replaced by shim frames owned by the C stack
  l.owner_first_shim = 3;       // FRAME_OWNED_BY_CSTACK
  l.code_firstlineno = 68;
  l.code_version = 92;
  l.code_adaptive = 192;
  l.code_firsttraceable = 176;
  l.code_type_basicsize = 192;
  l.unicode_ascii_size = 40;  // wstr is gone
  l.unicode_compact_size = 56;
  return l;
}

PythonLayout Make313() {
  PythonLayout l = Make312();
  l.minor = 13;
  l.frame_model = PyFrameModel::kInterp;
  l.ts_thread_id = 152;
  l.ts_native_thread_id = 160;
  l.ts_frame = 72;  // current_frame
  l.cframe_current_frame = kNoField;
  l.runtime_interpreters_head = 632;
  l.interp_threads_head = 7344;
  l.interp_next = 7264;
  l.frame_code = 0;    // f_executable: a code object, or None in shim frames
  l.frame_instr = 56;  // instr_ptr
  l.code_adaptive = 200;
  l.code_firsttraceable = 184;
  l.code_type_basicsize = 200;
  return l;
}

const PythonLayout kLayouts[] = {Make39(), Make310(), Make311(), Make312(), Make313()};

// Mirror of CPython 3.13's _Py_DebugOffsets (Include/internal/pycore_runtime.h): all fields are
// uint64_t after the 8-byte cookie. Only the fields read below are named; the static_asserts pin
// them to the offsets derive_layouts.c printed for the real struct.
struct DebugOffsets313 {
  char cookie[8];
  uint64_t version;
  uint64_t free_threaded;
  uint64_t runtime_state[3];
  uint64_t interpreter_state[13];
  struct {
    uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id, datastack_chunk,
        status;
  } thread_state;
  struct {
    uint64_t size, previous, executable, instr_ptr, localsplus, owner;
  } interpreter_frame;
  struct {
    uint64_t size, filename, name, qualname, linetable, firstlineno, argcount, localsplusnames,
        localspluskinds, co_code_adaptive;
  } code_object;
  struct {
    uint64_t size, ob_type;
  } pyobject;
  uint64_t type_object[4];
  uint64_t tuple_object[3];
  uint64_t list_object[3];
  uint64_t dict_object[3];
  uint64_t float_object[2];
  uint64_t long_object[3];
  struct {
    uint64_t size, ob_size, ob_sval;
  } bytes_object;
  struct {
    uint64_t size, state, length, asciiobject_size;
  } unicode_object;
  uint64_t gc[2];
};
static_assert(offsetof(DebugOffsets313, thread_state.current_frame) == 184, "3.13 mirror");
static_assert(offsetof(DebugOffsets313, interpreter_frame.previous) == 232, "3.13 mirror");
static_assert(offsetof(DebugOffsets313, code_object.filename) == 280, "3.13 mirror");
static_assert(offsetof(DebugOffsets313, code_object.co_code_adaptive) == 344, "3.13 mirror");
static_assert(offsetof(DebugOffsets313, bytes_object.ob_size) == 520, "3.13 mirror");
static_assert(offsetof(DebugOffsets313, unicode_object.state) == 544, "3.13 mirror");
static_assert(sizeof(DebugOffsets313) == 584, "3.13 mirror");

// Offsets are used as int; anything this large is not a field offset of these structs.
bool Small(uint64_t v) { return v < (1u << 16); }

}  // namespace

const PythonLayout* BuiltinPythonLayout(int minor) {
  for (const PythonLayout& l : kLayouts) {
    if (l.minor == minor) return &l;
  }
  return nullptr;
}

bool PythonLayoutFromDebugOffsets(const void* py_runtime, uint32_t version_hex, PythonLayout* out,
                                  const char** why) {
  DebugOffsets313 d;
  std::memcpy(&d, py_runtime, sizeof d);  // _PyRuntime is static data: always mapped
  if (std::memcmp(d.cookie, "xdebugpy", 8) != 0) {
    *why = "_PyRuntime.debug_offsets has no \"xdebugpy\" cookie";
    return false;
  }
  if ((d.version >> 16) != 0x030D || (d.version & 0xFFFF0000u) != (version_hex & 0xFFFF0000u)) {
    *why = "_PyRuntime.debug_offsets version does not match Py_Version";
    return false;
  }
  if (d.free_threaded != 0) {
    *why = "free-threaded build";
    return false;
  }
  const uint64_t fields[] = {d.thread_state.current_frame,     d.thread_state.thread_id,
                             d.thread_state.native_thread_id,  d.interpreter_frame.previous,
                             d.interpreter_frame.executable,   d.interpreter_frame.instr_ptr,
                             d.interpreter_frame.owner,        d.code_object.filename,
                             d.code_object.qualname,           d.code_object.name,
                             d.code_object.linetable,          d.code_object.firstlineno,
                             d.code_object.co_code_adaptive,   d.pyobject.ob_type,
                             d.bytes_object.ob_size,           d.bytes_object.ob_sval,
                             d.unicode_object.state,           d.unicode_object.length,
                             d.unicode_object.asciiobject_size,
                             d.runtime_state[2],               d.thread_state.next};
  for (uint64_t f : fields) {
    if (!Small(f)) {
      *why = "_PyRuntime.debug_offsets holds an implausible offset";
      return false;
    }
  }
  // Start from the compiled 3.13 table for what the debug offsets do not carry (owner values,
  // _co_firsttraceable, unicode state bits and compact size, PyTypeObject/PyMemberDef).
  PythonLayout l = *BuiltinPythonLayout(13);
  l.ts_frame = static_cast<int>(d.thread_state.current_frame);
  l.ts_thread_id = static_cast<int>(d.thread_state.thread_id);
  l.ts_native_thread_id = static_cast<int>(d.thread_state.native_thread_id);
  // runtime_state = {size, finalizing, interpreters_head}; interpreter_state[3] = threads_head
  // (it may exceed 16 bits: the thread list sits deep inside PyInterpreterState).
  l.runtime_interpreters_head = static_cast<int>(d.runtime_state[2]);
  if (d.interpreter_state[3] < (1u << 20)) l.interp_threads_head = static_cast<int>(d.interpreter_state[3]);
  // interpreter_state[2] = next; without it the version index stays off (code_version below).
  l.interp_next = d.interpreter_state[2] < (1u << 20) ? static_cast<int>(d.interpreter_state[2]) : kNoField;
  l.ts_next = static_cast<int>(d.thread_state.next);
  l.frame_previous = static_cast<int>(d.interpreter_frame.previous);
  l.frame_code = static_cast<int>(d.interpreter_frame.executable);
  l.frame_instr = static_cast<int>(d.interpreter_frame.instr_ptr);
  l.frame_owner = static_cast<int>(d.interpreter_frame.owner);
  l.code_filename = static_cast<int>(d.code_object.filename);
  l.code_name = static_cast<int>(d.code_object.name);
  l.code_qualname = static_cast<int>(d.code_object.qualname);
  l.code_linetable = static_cast<int>(d.code_object.linetable);
  l.code_firstlineno = static_cast<int>(d.code_object.firstlineno);
  l.code_adaptive = static_cast<int>(d.code_object.co_code_adaptive);
  // co_version is not in the debug offsets: the compiled table's offset holds only while the
  // fields around it (co_firstlineno before, co_localsplusnames and co_filename after) are where
  // that table has them; otherwise, and without interp_next, no version index.
  const PythonLayout& compiled = *BuiltinPythonLayout(13);
  if (l.code_firstlineno != compiled.code_firstlineno || l.code_filename != compiled.code_filename ||
      d.code_object.localsplusnames != static_cast<uint64_t>(compiled.code_version + 4) || l.interp_next == kNoField) {
    l.code_version = kNoField;
  }
  l.code_type_basicsize = static_cast<int>(d.code_object.co_code_adaptive);
  l.object_type = static_cast<int>(d.pyobject.ob_type);
  l.var_size = static_cast<int>(d.bytes_object.ob_size);
  l.bytes_data = static_cast<int>(d.bytes_object.ob_sval);
  l.unicode_state = static_cast<int>(d.unicode_object.state);
  l.unicode_length = static_cast<int>(d.unicode_object.length);
  l.unicode_ascii_size = static_cast<int>(d.unicode_object.asciiobject_size);
  *out = l;
  return true;
}

}  // namespace gs
