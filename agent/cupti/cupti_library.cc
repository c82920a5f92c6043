// cupti_library.cc
#include "agent/cupti/cupti_library.h"

#include <dlfcn.h>
#include <glob.h>

#include <cstdlib>
#include <vector>

#include "agent/capture/cuda_runtime_symbols.h"

namespace gs {
namespace {

std::string Soname(int major) { return "libcupti.so." + std::to_string(major); }

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

void AddToolkitRoot(const char* root, const std::string& soname, std::vector<std::string>* out) {
  if (root == nullptr || root[0] == '\0') return;
  const std::string r(root);
  out->push_back(r + "/extras/CUPTI/lib64/" + soname);
  out->push_back(r + "/lib64/" + soname);
  out->push_back(r + "/lib/" + soname);  // pip-wheel style toolkits (nvidia/cu13/lib)
  out->push_back(r + "/targets/x86_64-linux/lib/" + soname);
}

void AddToolkitGlob(const char* pattern, const std::string& soname, std::vector<std::string>* out) {
  glob_t g{};
  if (glob(pattern, 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) AddToolkitRoot(g.gl_pathv[i], soname, out);
  }
  globfree(&g);
}

// The CUDA major whose version node the library's symbols carry, 0 for neither 12 nor 13.
int MajorOfCupti(void* handle) {
  for (const int major : {13, 12}) {
    if (dlvsym(handle, "cuptiGetVersion", Soname(major).c_str()) != nullptr) return major;
  }
  return 0;
}

bool Resolve(void* handle, CuptiLibrary* library, std::string* error) {
#define GS_CUPTI_RESOLVE(name, required)                                                   \
  library->fn.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));             \
  if ((required) && library->fn.name == nullptr) {                                          \
    *error = library->path + ": missing " #name;                                            \
    return false;                                                                           \
  }
  GS_CUPTI_FUNCTIONS(GS_CUPTI_RESOLVE)
#undef GS_CUPTI_RESOLVE
  return true;
}

}  // namespace

std::vector<std::string> CuptiCandidatePaths(const std::string& explicit_path,
                                             const std::string& loaded_cudart_path) {
  std::vector<std::string> paths;
  if (!explicit_path.empty()) paths.push_back(explicit_path);
  // The runtime's major first; without a runtime (not loaded yet, or linked statically) 13.
  const int runtime_major = CudaMajorOfLibrary(loaded_cudart_path);
  const int first = runtime_major == 12 ? 12 : 13;
  const int second = first == 13 ? 12 : 13;
  // Beside the runtime before the loader's search path: a job on the runtime of its Python's
  // nvidia wheels must not get a toolkit's CUPTI that ld.so.cache happens to list (CUPTI and the
  // runtime come from one CUDA release).
  if (!loaded_cudart_path.empty()) {
    const std::string dir = DirName(loaded_cudart_path);
    const std::string soname = Soname(first);
    paths.push_back(dir + "/" + soname);                              // toolkit lib64, nvidia/cu13/lib
    paths.push_back(dir + "/../../cuda_cupti/lib/" + soname);         // nvidia/cuda_runtime/lib
    paths.push_back(dir + "/../../cu13/lib/" + soname);               // mixed wheel layouts
    paths.push_back(dir + "/../extras/CUPTI/lib64/" + soname);        // toolkit: lib64 → extras
  }
  for (const int major : {first, second}) {
    const std::string soname = Soname(major);
    paths.push_back(soname);  // the loader's search path
    AddToolkitRoot(std::getenv("CUDA_HOME"), soname, &paths);
    AddToolkitRoot(std::getenv("CUDA_PATH"), soname, &paths);
    AddToolkitRoot("/usr/local/cuda", soname, &paths);
    AddToolkitGlob(major == 13 ? "/usr/local/cuda-13*" : "/usr/local/cuda-12*", soname, &paths);
  }
  return paths;
}

bool LoadCuptiLibrary(const std::string& explicit_path, CuptiLibrary* library, std::string* error) {
  void* handle = nullptr;
  std::string tried;
  // 1. Reuse a CUPTI that is already mapped (RTLD_NOLOAD never maps a new one).
  const std::string mapped = FindMappedLibrary("libcupti.so");
  if (!mapped.empty()) {
    handle = dlopen(mapped.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (handle != nullptr) library->path = mapped;
  }
  if (handle == nullptr) {
    for (const std::string& candidate :
         CuptiCandidatePaths(explicit_path, FindMappedLibrary("libcudart.so"))) {
      handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle != nullptr) {
        library->path = candidate;
        break;
      }
      if (!tried.empty()) tried += ", ";
      tried += candidate;
    }
  }
  if (handle == nullptr) {
    *error = "libcupti not found (tried: " + tried + ")";
    return false;
  }
  // The handle is never closed: CUPTI keeps threads and callbacks into us until exit.
  if (!Resolve(handle, library, error)) return false;
  uint32_t version = 0;
  const int major = MajorOfCupti(handle);
  if (major == 0) {
    *error = library->path + ": not CUDA 12 or 13's CUPTI (its symbols carry neither version node "
                             "libcupti.so.12 nor libcupti.so.13)";
    return false;
  }
  const uint32_t floor = major == 13 ? kMinCupti13ApiVersion : kMinCupti12ApiVersion;
  if (library->fn.cuptiGetVersion(&version) != CUPTI_SUCCESS || version < floor ||
      (major == 12 && version >= kMinCupti13ApiVersion)) {
    *error = library->path + ": CUPTI API version " + std::to_string(version) +
             " is not that of a CUDA " + std::to_string(major) + " CUPTI";
    return false;
  }
  library->version = version;
  library->major = major;
  return true;
}

}  // namespace gs
