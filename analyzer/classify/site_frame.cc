#include "analyzer/classify/site_frame.h"

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"

namespace gs::analyzer {

namespace {

// CUDA's own libraries and the agent. libsimgpu_driver: simgpu's device model (tests/simgpu), which
// its libcuda.so.1 and libcudart.so.13 share; it stands in for the driver's internals, and the
// demo and the tests run on it.
bool IsRuntimeFrame(const FrameInfo& f) {
  for (const char* lib : {"libcudart", "libcuda.so", "libcupti", "libgsagent", "libcublas", "libcudnn",
                          "libsimgpu_driver"})
    if (absl::StrContains(f.module, lib)) return true;
  return absl::StartsWith(f.function, "gs::") || absl::StartsWith(f.function, "cuda") ||
         absl::StartsWith(f.function, "__cuda");
}

// The native frames between a Python call and the C function it reaches: libffi and ctypes (a
// ctypes binding), the interpreter (libpython, or a statically linked python executable).
// Without this, every Python program's sites read "libffi.so.8+0x6f7a".
bool IsLanguageGlueFrame(const FrameInfo& f) {
  if (f.module.empty()) return false;  // Python frames have no module
  const absl::string_view module = f.module;
  const size_t slash = module.rfind('/');
  const absl::string_view base = slash == absl::string_view::npos ? module : module.substr(slash + 1);
  if (absl::StartsWith(base, "libffi") || absl::StartsWith(base, "_ctypes") ||
      absl::StartsWith(base, "_cffi_backend"))
    return true;
  return IsInterpreterFrame(f);
}

// Installed packages (Python files and native extension modules: torch's Python layer and
// libtorch_cuda.so, cuda-python, ...) and Python's standard library. The user's own code is not
// installed there; the frame that matters to them is the first one outside.
bool IsInstalledPackageFrame(const FrameInfo& f) {
  const absl::string_view path = f.module.empty() ? absl::string_view(f.file) : absl::string_view(f.module);
  if (path.empty()) return false;
  if (absl::StrContains(path, "/site-packages/") || absl::StrContains(path, "/dist-packages/")) return true;
  // The standard library's extension modules: .../lib/python3.N/lib-dynload/array.cpython-...so.
  if (!f.module.empty()) return absl::StrContains(path, "/lib-dynload/");
  // Python source of the standard library: .../lib/python3.N/<module>.py, and frozen modules.
  return absl::StartsWith(path, "<frozen ") || absl::StrContains(path, "/lib/python3.");
}
// The C and C++ runtime: glibc (libc, libm, libpthread, the loader, ...), musl, libstdc++ and
// libgcc_s. A sample taken in memcpy or a futex wait is the user's caller's time; and a Python
// program's stack ends in the interpreter's entry through libc ("libc.so.6+0x2724a").
bool IsSystemRuntimeFrame(const FrameInfo& f) {
  if (f.module.empty()) return false;
  const size_t slash = f.module.rfind('/');
  const absl::string_view base =
      slash == std::string::npos ? absl::string_view(f.module) : absl::string_view(f.module).substr(slash + 1);
  for (const char* lib : {"libc.so", "libc-", "ld-linux", "ld-musl", "libc.musl", "libpthread", "libm.so",
                          "libm-", "libdl", "librt", "libstdc++", "libgcc_s"})
    if (absl::StartsWith(base, lib)) return true;
  return false;
}

// Where a process or a thread begins: no stack is the user's there, whichever module holds them
// (_start is the executable's own).
bool IsEntryFrame(const FrameInfo& f) {
  for (const char* entry : {"_start", "__libc_start_main", "__libc_start_call_main", "__libc_start_main_impl",
                            "start_thread", "clone", "clone3", "__clone", "__clone3", "__clone_internal"})
    if (f.function == entry) return true;
  return false;
}

// An unsymbolised native frame reads "module+0x1a2b" or "0x1a2b" (reader::InternTables::DescribeFrame),
// or "module+?" once stack_view.h has put a module's unnamed frames in one bucket.
bool IsNamedFrame(const FrameInfo& f) {
  return !f.function.empty() && !absl::StartsWith(f.function, "0x") && !absl::StrContains(f.function, "+0x") &&
         !absl::EndsWith(f.function, "+?") && !absl::StartsWith(f.function, "<frame #");
}

}  // namespace

bool IsPythonFrame(const FrameInfo& f) { return f.module.empty() && !f.file.empty(); }

bool IsProcessRuntimeFrame(const FrameInfo& f) { return IsEntryFrame(f) || IsSystemRuntimeFrame(f); }

bool IsInterpreterFrame(const FrameInfo& f) {
  if (f.module.empty()) return false;
  const absl::string_view module = f.module;
  const size_t slash = module.rfind('/');
  const absl::string_view base = slash == absl::string_view::npos ? module : module.substr(slash + 1);
  if (absl::StartsWith(base, "libpython")) return true;
  // The interpreter executable: python, python3, python3.12, python3.13t ...
  return absl::StartsWith(base, "python") && base.find(".so") == absl::string_view::npos;
}

bool IsLibraryFrame(const FrameInfo& f) {
  if (IsEntryFrame(f)) return true;
  if (f.main_program) return false;
  return IsRuntimeFrame(f) || IsLanguageGlueFrame(f) || IsInstalledPackageFrame(f) || IsSystemRuntimeFrame(f);
}

void SiteWithCallers(const std::vector<FrameInfo>& frames, size_t max_callers, FrameInfo* frame,
                     std::vector<FrameInfo>* callers) {
  const size_t at = SiteFrameIndex(frames);
  if (at >= frames.size()) return;
  *frame = frames[at];
  for (size_t i = at + 1; i < frames.size() && callers->size() < max_callers; ++i) callers->push_back(frames[i]);
}

size_t SiteFrameIndex(const std::vector<FrameInfo>& frames) {
  for (size_t i = 0; i < frames.size(); ++i)
    if (!IsLibraryFrame(frames[i])) return i;
  // No frame of the user's: the innermost Python frame says where the program was; else the
  // innermost named native frame that is not an entry frame.
  for (size_t i = 0; i < frames.size(); ++i)
    if (IsPythonFrame(frames[i])) return i;
  for (size_t i = 0; i < frames.size(); ++i)
    if (IsNamedFrame(frames[i]) && !IsEntryFrame(frames[i])) return i;
  return 0;
}

FrameInfo SiteFrame(const std::vector<FrameInfo>& frames) {
  return frames.empty() ? FrameInfo{} : frames[SiteFrameIndex(frames)];
}

}  // namespace gs::analyzer
