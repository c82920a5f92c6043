// python_runtime.cc — see python_runtime.h.
#include "agent/python/python_runtime.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "agent/python/raw_memory.h"

namespace gs {
namespace {

void* Sym(const char* name) { return dlsym(RTLD_DEFAULT, name); }

// PY_VERSION_HEX from Py_Version (3.11+) or by parsing Py_GetVersion() ("3.10.13 (main, ...").
uint32_t VersionHex() {
  if (const void* v = Sym("Py_Version"))
    return static_cast<uint32_t>(*static_cast<const unsigned long*>(v));
  using GetVersion = const char* (*)();
  auto get = reinterpret_cast<GetVersion>(Sym("Py_GetVersion"));
  if (get == nullptr) return 0;
  const char* s = get();
  char* end = nullptr;
  const long major = std::strtol(s, &end, 10);
  if (end == nullptr || *end != '.') return 0;
  const long minor = std::strtol(end + 1, &end, 10);
  long micro = 0;
  if (end != nullptr && *end == '.') micro = std::strtol(end + 1, &end, 10);
  if (major < 0 || major > 255 || minor < 0 || minor > 255 || micro < 0 || micro > 255) return 0;
  return static_cast<uint32_t>((major << 24) | (minor << 16) | (micro << 8));
}

// Offset of member `name` in PyCode_Type.tp_members, or -1.
long CodeMemberOffset(uintptr_t code_type, const PythonLayout& l, const char* name) {
  const uintptr_t members = LoadAt<uintptr_t>(code_type, l.type_members);
  if (!PlausibleObject(members)) return -1;
  for (int i = 0; i < 64; ++i) {
    const uintptr_t entry = members + static_cast<uintptr_t>(i) * l.member_size;
    const char* member_name = LoadAt<const char*>(entry, l.member_name);
    if (member_name == nullptr) break;
    if (std::strcmp(member_name, name) == 0) return LoadAt<long>(entry, l.member_offset);
  }
  return -1;
}

// Cross-checks the table against what the interpreter says about itself. Returns nullptr if
// consistent, else which check failed.
const char* CheckLayout(const PythonLayout& l, const PyTypePointers& types) {
  if (LoadAt<long>(types.code, l.type_basicsize) != l.code_type_basicsize) {
    return "PyCode_Type.tp_basicsize";
  }
  if (l.frame_model == PyFrameModel::kFrameObject) {
    const void* frame_type = Sym("PyFrame_Type");
    if (frame_type == nullptr || LoadAt<long>(reinterpret_cast<uintptr_t>(frame_type),
                                              l.type_basicsize) != l.frame_type_basicsize) {
      return "PyFrame_Type.tp_basicsize";
    }
  }
  struct {
    const char* name;
    int offset;
  } const members[] = {{"co_filename", l.code_filename},
                       {"co_name", l.code_name},
                       {"co_firstlineno", l.code_firstlineno},
                       {l.linetable_member, l.code_linetable},
                       {"co_qualname", l.minor >= 11 ? l.code_qualname : kNoField}};
  for (const auto& m : members) {
    if (m.offset == kNoField) continue;
    if (CodeMemberOffset(types.code, l, m.name) != m.offset) return m.name;
  }
  return nullptr;
}

}  // namespace

PythonDetectResult DetectPythonRuntime(PythonRuntimeInfo* out, char* message, size_t message_size) {
  message[0] = '\0';
  auto get_tstate = reinterpret_cast<void* (*)()>(Sym("PyGILState_GetThisThreadState"));
  if (get_tstate == nullptr) return PythonDetectResult::kNotPython;
  const uint32_t hex = VersionHex();
  const int major = static_cast<int>(hex >> 24);
  const int minor = static_cast<int>((hex >> 16) & 0xFF);
  const int micro = static_cast<int>((hex >> 8) & 0xFF);
  PythonRuntimeInfo info;
  info.version_hex = hex;
  info.minor = minor;
  info.micro = micro;
  info.get_this_thread_state = get_tstate;
  info.gil_check = reinterpret_cast<int (*)()>(Sym("PyGILState_Check"));
  info.types.code = reinterpret_cast<uintptr_t>(Sym("PyCode_Type"));
  info.types.bytes = reinterpret_cast<uintptr_t>(Sym("PyBytes_Type"));
  info.types.unicode = reinterpret_cast<uintptr_t>(Sym("PyUnicode_Type"));
  info.types.none = reinterpret_cast<uintptr_t>(Sym("_Py_NoneStruct"));
  if (major != 3 || minor < 9 || minor > 13) {
    std::snprintf(message, message_size,
                  "CPython %d.%d detected; Python stacks support 3.9-3.13 only, disabled", major,
                  minor);
    return PythonDetectResult::kUnsupportedVersion;
  }
  if (info.types.code == 0 || info.types.bytes == 0 || info.types.unicode == 0) {
    std::snprintf(message, message_size,
                  "CPython 3.%d without PyCode_Type/PyBytes_Type/PyUnicode_Type symbols; "
                  "Python stacks disabled",
                  minor);
    return PythonDetectResult::kLayoutMismatch;
  }
  if (minor >= 13) {
    const void* runtime = Sym("_PyRuntime");
    if (runtime == nullptr) {
      std::snprintf(message, message_size,
                    "CPython 3.%d without _PyRuntime; Python stacks disabled", minor);
      return PythonDetectResult::kLayoutMismatch;
    }
    // _Py_DebugOffsets: cookie[8], version, free_threaded.
    const uintptr_t r = reinterpret_cast<uintptr_t>(runtime);
    if (std::memcmp(runtime, "xdebugpy", 8) == 0 && LoadAt<uint64_t>(r, 16) != 0) {
      std::snprintf(message, message_size,
                    "free-threaded CPython 3.%d.%d (Py_GIL_DISABLED) detected; Python stacks are "
                    "not supported there, disabled",
                    minor, micro);
      return PythonDetectResult::kFreeThreaded;
    }
    const char* why = "";
    if (!PythonLayoutFromDebugOffsets(runtime, hex, &info.layout, &why)) {
      std::snprintf(message, message_size, "CPython 3.%d.%d: %s; Python stacks disabled", minor,
                    micro, why);
      return PythonDetectResult::kLayoutMismatch;
    }
  } else {
    info.layout = *BuiltinPythonLayout(minor);
  }
  if (const char* bad = CheckLayout(info.layout, info.types)) {
    std::snprintf(message, message_size,
                  "CPython 3.%d.%d: %s differs from the layout gpustall knows; Python stacks "
                  "disabled",
                  minor, micro, bad);
    return PythonDetectResult::kLayoutMismatch;
  }
  info.py_runtime = reinterpret_cast<uintptr_t>(Sym("_PyRuntime"));
  // The evaluation loop's extent, for telling its native frames apart (stack merging).
  if (void* eval = Sym("_PyEval_EvalFrameDefault")) {
    Dl_info dl;
    void* extra = nullptr;
    if (dladdr1(eval, &dl, &extra, RTLD_DL_SYMENT) != 0 && extra != nullptr) {
      const auto* sym = static_cast<const ElfW(Sym)*>(extra);
      info.eval_frame_begin = reinterpret_cast<uintptr_t>(eval);
      info.eval_frame_end = info.eval_frame_begin + sym->st_size;
    }
  }
  *out = info;
  return PythonDetectResult::kPython;
}

}  // namespace gs
