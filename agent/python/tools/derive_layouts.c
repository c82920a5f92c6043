/* derive_layouts.c — prints the CPython struct offsets that python_layouts.cc hard-codes.
 *
 * Not part of the build (the build must not depend on pyenv headers). Re-run it when adding a
 * version, compiled against that version's own headers, internal ones included:
 *
 *   P=/root/.pyenv/versions/3.12.1; V=3.12
 *   gcc -DPy_BUILD_CORE -I$P/include/python$V -I$P/include/python$V/internal \
 *       -o /tmp/derive derive_layouts.c && /tmp/derive
 */
#include <Python.h>
#include <frameobject.h>
#include <structmember.h>
#include <stddef.h>
#include <stdio.h>
#if PY_VERSION_HEX >= 0x030B0000
#include "pycore_frame.h"
#endif
#if PY_VERSION_HEX >= 0x030D0000
#include "pycore_runtime.h"
#endif

#define P(name, value) printf("  %-28s %zu\n", name, (size_t)(value))

int main(void) {
  printf("%s\n", PY_VERSION);
  P("ts.interp", offsetof(PyThreadState, interp));
#if PY_VERSION_HEX < 0x030B0000
  P("ts.frame", offsetof(PyThreadState, frame));
#elif PY_VERSION_HEX < 0x030D0000
  P("ts.cframe", offsetof(PyThreadState, cframe));
  P("cframe.current_frame", offsetof(_PyCFrame, current_frame));
#else
  P("ts.current_frame", offsetof(PyThreadState, current_frame));
#endif
  P("ts.thread_id", offsetof(PyThreadState, thread_id));
#if PY_VERSION_HEX >= 0x030B0000
  P("ts.native_thread_id", offsetof(PyThreadState, native_thread_id));
#endif
#if PY_VERSION_HEX < 0x030B0000
  P("frame.f_back", offsetof(PyFrameObject, f_back));
  P("frame.f_code", offsetof(PyFrameObject, f_code));
  P("frame.f_lasti", offsetof(PyFrameObject, f_lasti));
  P("sizeof(PyFrameObject)", sizeof(PyFrameObject));
#else
  P("iframe.previous", offsetof(_PyInterpreterFrame, previous));
#if PY_VERSION_HEX < 0x030D0000
  P("iframe.f_code", offsetof(_PyInterpreterFrame, f_code));
  P("iframe.prev_instr", offsetof(_PyInterpreterFrame, prev_instr));
#else
  P("iframe.f_executable", offsetof(_PyInterpreterFrame, f_executable));
  P("iframe.instr_ptr", offsetof(_PyInterpreterFrame, instr_ptr));
#endif
  P("iframe.owner", offsetof(_PyInterpreterFrame, owner));
#if PY_VERSION_HEX < 0x030C0000
  P("iframe.is_entry", offsetof(_PyInterpreterFrame, is_entry));
#endif
  P("FRAME_OWNED_BY_GENERATOR", FRAME_OWNED_BY_GENERATOR);
#if PY_VERSION_HEX >= 0x030C0000
  P("FRAME_OWNED_BY_CSTACK", FRAME_OWNED_BY_CSTACK);
#endif
#endif
  P("code.co_firstlineno", offsetof(PyCodeObject, co_firstlineno));
  P("code.co_filename", offsetof(PyCodeObject, co_filename));
  P("code.co_name", offsetof(PyCodeObject, co_name));
#if PY_VERSION_HEX >= 0x030B0000
  P("code.co_qualname", offsetof(PyCodeObject, co_qualname));
  P("code.co_code_adaptive", offsetof(PyCodeObject, co_code_adaptive));
  P("code._co_firsttraceable", offsetof(PyCodeObject, _co_firsttraceable));
#endif
#if PY_VERSION_HEX >= 0x030C0000
  P("code.co_version", offsetof(PyCodeObject, co_version));
#endif
#if PY_VERSION_HEX >= 0x030A0000
  P("code.co_linetable", offsetof(PyCodeObject, co_linetable));
#else
  P("code.co_lnotab", offsetof(PyCodeObject, co_lnotab));
#endif
  P("sizeof(PyCodeObject)", sizeof(PyCodeObject));
  P("PyCode_Type.tp_basicsize", PyCode_Type.tp_basicsize);
  P("type.tp_basicsize", offsetof(PyTypeObject, tp_basicsize));
  P("type.tp_members", offsetof(PyTypeObject, tp_members));
  P("memberdef.name", offsetof(PyMemberDef, name));
  P("memberdef.offset", offsetof(PyMemberDef, offset));
  P("sizeof(PyMemberDef)", sizeof(PyMemberDef));
  P("object.ob_type", offsetof(PyObject, ob_type));
  P("bytes.ob_size", offsetof(PyVarObject, ob_size));
  P("bytes.ob_sval", offsetof(PyBytesObject, ob_sval));
  P("unicode.length", offsetof(PyASCIIObject, length));
  P("unicode.state (after hash)", offsetof(PyASCIIObject, hash) + sizeof(Py_hash_t));
  P("sizeof(PyASCIIObject)", sizeof(PyASCIIObject));
  P("sizeof(PyCompactUnicodeObject)", sizeof(PyCompactUnicodeObject));
  {
    /* Bit positions of the unicode state bitfield, found by setting each field. */
    PyASCIIObject a;
    memset(&a, 0, sizeof a);
    a.state.kind = 7;
    printf("  state.kind mask            0x%x\n", *(unsigned int*)&a.state);
    memset(&a, 0, sizeof a);
    a.state.compact = 1;
    printf("  state.compact mask         0x%x\n", *(unsigned int*)&a.state);
    memset(&a, 0, sizeof a);
    a.state.ascii = 1;
    printf("  state.ascii mask           0x%x\n", *(unsigned int*)&a.state);
  }
#if PY_VERSION_HEX >= 0x030D0000
  P("interp.next", offsetof(PyInterpreterState, next));
  P("runtime.debug_offsets", offsetof(_PyRuntimeState, debug_offsets));
  P("dbg.thread_state.current_frame", offsetof(_Py_DebugOffsets, thread_state.current_frame));
  P("dbg.interpreter_frame.previous", offsetof(_Py_DebugOffsets, interpreter_frame.previous));
  P("dbg.code_object.filename", offsetof(_Py_DebugOffsets, code_object.filename));
  P("dbg.code_object.co_code_adaptive", offsetof(_Py_DebugOffsets, code_object.co_code_adaptive));
  P("dbg.unicode_object.state", offsetof(_Py_DebugOffsets, unicode_object.state));
  P("dbg.bytes_object.ob_size", offsetof(_Py_DebugOffsets, bytes_object.ob_size));
  P("sizeof(_Py_DebugOffsets)", sizeof(_Py_DebugOffsets));
#endif
  return 0;
}
