// cuda_runtime_symbols.cc
#include "agent/capture/cuda_runtime_symbols.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <cstring>

namespace gs {
namespace {

struct MappedSearch {
  const char* prefix;
  std::string path;
};

int VisitMapped(struct dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<MappedSearch*>(data);
  if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') return 0;
  const char* slash = std::strrchr(info->dlpi_name, '/');
  const char* base = slash ? slash + 1 : info->dlpi_name;
  if (std::strncmp(base, search->prefix, std::strlen(search->prefix)) != 0) return 0;
  search->path = info->dlpi_name;
  return 1;
}

}  // namespace

std::string FindMappedLibrary(const char* prefix) {
  MappedSearch search{prefix, {}};
  dl_iterate_phdr(VisitMapped, &search);
  return search.path;
}

int CudaMajorOfLibrary(const std::string& path) {
  const size_t at = path.rfind(".so.");
  if (at == std::string::npos) return 0;
  return std::atoi(path.c_str() + at + 4);
}

void* FindCudaRuntimeSymbol(const char* name) {
  if (void* f = dlvsym(RTLD_NEXT, name, "libcudart.so.13")) return f;
  if (void* f = dlsym(RTLD_NEXT, name)) return f;
  const std::string path = FindMappedLibrary("libcudart.so");
  if (path.empty()) return nullptr;
  // RTLD_NOLOAD: only a runtime that is already mapped; never load one ourselves.
  void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return nullptr;
  void* f = dlvsym(handle, name, "libcudart.so.13");
  if (f == nullptr) f = dlsym(handle, name);
  // The handle is deliberately not closed: it only pins a library the process already uses.
  return f;
}

}  // namespace gs
