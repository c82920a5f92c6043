#include "analyzer/classify/site_frame.h"

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"

namespace gs::analyzer {

namespace {

bool IsRuntimeFrame(const FrameInfo& f) {
  for (const char* lib : {"libcudart", "libcuda.so", "libcupti", "libgsagent", "libcublas", "libcudnn"})
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
      absl::StartsWith(base, "libpython") || absl::StartsWith(base, "_cffi_backend"))
    return true;
  // The interpreter executable: python, python3, python3.12, python3.13t ...
  return absl::StartsWith(base, "python") && base.find(".so") == absl::string_view::npos;
}

// Installed packages (Python files and native extension modules: torch's Python layer and
// libtorch_cuda.so, cuda-python, ...) and Python's standard library. The user's own code is not
// installed there; the frame that matters to them is the first one outside.
bool IsInstalledPackageFrame(const FrameInfo& f) {
  const absl::string_view path = f.module.empty() ? absl::string_view(f.file) : absl::string_view(f.module);
  if (path.empty()) return false;
  if (absl::StrContains(path, "/site-packages/") || absl::StrContains(path, "/dist-packages/")) return true;
  if (!f.module.empty()) return false;
  // Python source of the standard library: .../lib/python3.N/<module>.py, and frozen modules.
  return absl::StartsWith(path, "<frozen ") || absl::StrContains(path, "/lib/python3.");
}
}  // namespace

bool IsLibraryFrame(const FrameInfo& f) {
  return IsRuntimeFrame(f) || IsLanguageGlueFrame(f) || IsInstalledPackageFrame(f);
}

size_t SiteFrameIndex(const std::vector<FrameInfo>& frames) {
  for (size_t i = 0; i < frames.size(); ++i)
    if (!IsLibraryFrame(frames[i])) return i;
  return 0;
}

FrameInfo SiteFrame(const std::vector<FrameInfo>& frames) {
  return frames.empty() ? FrameInfo{} : frames[SiteFrameIndex(frames)];
}

}  // namespace gs::analyzer
