// caller_runtime.cc
#include "agent/capture/caller_runtime.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>

#include "agent/capture/cuda_runtime_symbols.h"

namespace gs {
namespace {

// An object's address range and the runtime its calls belong to. Written once, under g_mu, before
// g_object_count publishes it.
struct ObjectRuntime {
  uintptr_t lo = 0;
  uintptr_t hi = 0;
  int runtime = 0;
};
constexpr int kMaxObjects = 512;
ObjectRuntime g_objects[kMaxObjects];
std::atomic<int> g_object_count{0};

struct Runtime {
  int major = 0;
  void* handle = nullptr;  // runtimes > 0: the mapped libcudart.so.N, never closed
};
Runtime g_runtimes[kMaxCudaRuntimes];
std::atomic<int> g_runtime_count{1};  // [0], the default, always
bool g_default_known = false;         // g_runtimes[0].major learnt (under g_mu)
std::mutex g_mu;

__attribute__((tls_model("initial-exec"))) thread_local int t_last_object = -1;

// What dl_iterate_phdr finds for an address: its object's load range and the CUDA major of the
// libcudart.so.N it names in DT_NEEDED (0 for none).
struct ObjectSearch {
  uintptr_t address = 0;
  bool found = false;
  uintptr_t lo = 0, hi = 0;
  int needed_major = 0;
};

int NeededRuntimeMajor(const dl_phdr_info* info, const ElfW(Phdr)* dynamic) {
  const auto* dyn = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + dynamic->p_vaddr);
  uintptr_t strtab = 0;
  for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_STRTAB) strtab = d->d_un.d_ptr;
  }
  if (strtab == 0) return 0;
  // glibc relocates the loaded dynamic section's addresses in place; an unrelocated one is an
  // offset from the load address.
  if (strtab < info->dlpi_addr) strtab += info->dlpi_addr;
  for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag != DT_NEEDED) continue;
    const char* name = reinterpret_cast<const char*>(strtab + d->d_un.d_val);
    if (std::strncmp(name, "libcudart.so.", 13) == 0) return CudaMajorOfLibrary(name);
  }
  return 0;
}

int VisitObject(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<ObjectSearch*>(data);
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  const ElfW(Phdr)* dynamic = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_DYNAMIC) dynamic = &ph;
    if (ph.p_type != PT_LOAD) continue;
    const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (start < lo) lo = start;
    if (start + ph.p_memsz > hi) hi = start + ph.p_memsz;
  }
  if (search->address < lo || search->address >= hi) return 0;
  search->found = true;
  search->lo = lo;
  search->hi = hi;
  search->needed_major = dynamic != nullptr ? NeededRuntimeMajor(info, dynamic) : 0;
  return 1;
}

// The runtime index for callers linked to libcudart.so.`major` (under g_mu).
int RuntimeForMajor(int major) {
  if (!g_default_known) {
    g_default_known = true;
    Dl_info info{};
    void* f = FindCudaRuntimeSymbol("cudaGetLastError");
    if (f != nullptr && dladdr(f, &info) != 0 && info.dli_fname != nullptr) {
      g_runtimes[0].major = CudaMajorOfLibrary(info.dli_fname);
    }
  }
  if (major == 0 || major == g_runtimes[0].major) return 0;
  const int count = g_runtime_count.load(std::memory_order_relaxed);
  for (int i = 1; i < count; ++i) {
    if (g_runtimes[i].major == major) return i;
  }
  if (count == kMaxCudaRuntimes) return 0;
  const std::string path = FindMappedLibrary(("libcudart.so." + std::to_string(major)).c_str());
  if (path.empty()) return 0;
  // RTLD_NOLOAD: a runtime already mapped (the caller's own dependency), never a new one.
  void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return 0;
  g_runtimes[count] = Runtime{major, handle};
  g_runtime_count.store(count + 1, std::memory_order_release);
  return count;
}

int FindInTable(uintptr_t caller, int count) {
  for (int i = count - 1; i >= 0; --i) {  // newest first: a reloaded object's range wins
    if (caller >= g_objects[i].lo && caller < g_objects[i].hi) return i;
  }
  return -1;
}

__attribute__((noinline)) int RuntimeOfNewCaller(uintptr_t caller) {
  std::lock_guard<std::mutex> lock(g_mu);
  const int count = g_object_count.load(std::memory_order_relaxed);
  const int known = FindInTable(caller, count);
  if (known >= 0) {
    t_last_object = known;
    return g_objects[known].runtime;
  }
  ObjectSearch search;
  search.address = caller;
  dl_iterate_phdr(VisitObject, &search);
  if (!search.found) return 0;  // not in a loaded object (generated code): the default
  const int runtime = RuntimeForMajor(search.needed_major);
  if (count == kMaxObjects) return runtime;
  g_objects[count] = ObjectRuntime{search.lo, search.hi, runtime};
  g_object_count.store(count + 1, std::memory_order_release);
  t_last_object = count;
  return runtime;
}

}  // namespace

int RuntimeOfCaller(uintptr_t caller) {
  const int count = g_object_count.load(std::memory_order_acquire);
  const int last = t_last_object;
  if (last >= 0 && last < count && caller >= g_objects[last].lo && caller < g_objects[last].hi) {
    return g_objects[last].runtime;
  }
  const int i = FindInTable(caller, count);
  if (i >= 0) {
    t_last_object = i;
    return g_objects[i].runtime;
  }
  return RuntimeOfNewCaller(caller);
}

void* FindFunctionOfRuntime(int runtime, const char* name) {
  if (runtime <= 0 || runtime >= g_runtime_count.load(std::memory_order_acquire)) {
    return FindCudaRuntimeSymbol(name);
  }
  const Runtime& r = g_runtimes[runtime];
  const std::string node = "libcudart.so." + std::to_string(r.major);
  if (void* f = dlvsym(r.handle, name, node.c_str())) return f;
  return dlsym(r.handle, name);
}

int MajorOfRuntime(int runtime) {
  if (runtime < 0 || runtime >= g_runtime_count.load(std::memory_order_acquire)) return 0;
  return g_runtimes[runtime].major;
}

}  // namespace gs
