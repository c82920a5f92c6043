// kernels.cc — kernel registry (host function -> device name) and the kernel duration model.
//
// Resources: each kernel carries what its cubin says it needs of an SM (registers per thread,
// static shared memory; defaults without one) and its dynamic shared memory limit.
//
// Model: a launch occupies its stream for
//   simgpuKernel's exact duration, else the first SIMGPU_KERNEL_DURATIONS entry whose name
//   matches (mangled name, full demangled name, or demangled name without its parameter list),
//   else SIMGPU_KERNEL_NS.
#include <cxxabi.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "driver/internal.h"

namespace simgpu {

std::string Demangle(const char* name) {
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) return name;
  std::string result(out);
  std::free(out);
  return result;
}

namespace {

struct DurationOverride {
  std::string name;
  uint64_t ns;
};

// "a=1ms,b<int, float>=20us,f(float*, int)=3ms": a name may contain commas (template arguments,
// parameter lists), so a piece without '=' is joined with the pieces that follow it.
std::vector<DurationOverride> ParseOverrides(const std::string& text) {
  std::vector<std::string> pieces;
  std::string pending;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    std::string piece = text.substr(pos, comma - pos);
    pos = comma + 1;
    if (!pending.empty()) {
      piece = pending + "," + piece;
      pending.clear();
    }
    if (piece.empty()) continue;
    if (piece.find('=') == std::string::npos) {
      pending = piece;
    } else {
      pieces.push_back(piece);
    }
  }
  if (!pending.empty()) pieces.push_back(pending);  // reported as malformed below
  std::vector<DurationOverride> out;
  for (const std::string& p : pieces) {
    size_t eq = p.rfind('=');
    if (eq == std::string::npos || eq == 0) {
      ParseDurationNs("SIMGPU_KERNEL_DURATIONS", p.c_str());  // exits with a message
      continue;
    }
    out.push_back({p.substr(0, eq), ParseDurationNs("SIMGPU_KERNEL_DURATIONS",
                                                    p.substr(eq + 1).c_str())});
  }
  return out;
}

// "void ns::foo<int>(float*, int)" -> "ns::foo<int>"
std::string BaseName(const std::string& demangled) {
  std::string s = demangled;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') ++depth;
    else if (s[i] == '>') --depth;
    else if (s[i] == '(' && depth == 0) { s.resize(i); break; }
  }
  depth = 0;
  for (size_t i = s.size(); i-- > 0;) {
    if (s[i] == '>') ++depth;
    else if (s[i] == '<') --depth;
    else if (s[i] == ' ' && depth == 0) return s.substr(i + 1);
  }
  return s;
}

bool NameMatches(const std::string& pattern, const std::string& mangled,
                 const std::string& demangled) {
  return pattern == mangled || pattern == demangled || pattern == BaseName(demangled);
}

struct Registry {
  std::mutex mu;
  std::map<const void*, KernelInfo*> by_func;         // host function or handle -> kernel
  std::map<std::pair<std::string, uint64_t>, KernelInfo*> synthetic;
  std::set<const KernelInfo*> handles;
  std::map<std::pair<const void*, std::string>, KernelInfo*> module_functions;  // cuModuleGetFunction
};

Registry& Reg() {
  static Registry* r = new Registry;  // never freed: handles live until exit
  return *r;
}

}  // namespace

uint64_t ModelKernelDuration(const std::string& mangled, const std::string& demangled,
                             bool* faults) {
  static const std::vector<DurationOverride>* overrides =
      new std::vector<DurationOverride>(ParseOverrides(GetConfig().kernel_durations));
  const Config& c = GetConfig();
  *faults = !c.fault_kernel.empty() && NameMatches(c.fault_kernel, mangled, demangled);
  for (const DurationOverride& o : *overrides) {
    if (NameMatches(o.name, mangled, demangled)) return o.ns;
  }
  return c.kernel_ns;
}

namespace {

void ApplyResources(KernelInfo* k, const KernelResources* resources) {
  if (resources == nullptr) return;
  k->registers_per_thread.store(resources->registers_per_thread, std::memory_order_relaxed);
  k->static_shared_bytes.store(resources->static_shared_bytes, std::memory_order_relaxed);
}

// The kernel behind a handle FindKernel knows, as the registry holds it (writable).
KernelInfo* FindLocked(Registry& r, const void* func) {
  auto it = r.by_func.find(func);
  return it == r.by_func.end() ? nullptr : it->second;
}

}  // namespace

const KernelInfo* RegisterKernel(const void* host_fun, const char* device_name,
                                 const KernelResources* resources) {
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.by_func.find(host_fun);
  if (it != r.by_func.end()) return it->second;
  auto* k = new KernelInfo;
  ApplyResources(k, resources);
  k->name = device_name ? device_name : "";
  k->demangled = Demangle(k->name.c_str());
  k->duration_ns = ModelKernelDuration(k->name, k->demangled, &k->faults);
  k->collective = false;
  r.by_func[host_fun] = k;
  r.by_func[k] = k;  // the kernel handle (__cudaGetKernel) launches it too
  r.handles.insert(k);
  return k;
}

// The kernel name of every simgpuCollective launch: NCCL 2.x's all-reduce kernel naming.
constexpr const char* kCollectiveKernelName = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";

const KernelInfo* SyntheticKernel(const char* name, uint64_t duration_ns, bool collective) {
  Registry& r = Reg();
  std::string key_name = name ? name : "simgpu_kernel";
  if (collective) key_name = "collective:" + key_name;
  std::lock_guard<std::mutex> lock(r.mu);
  auto key = std::make_pair(key_name, duration_ns);
  auto it = r.synthetic.find(key);
  if (it != r.synthetic.end()) return it->second;
  auto* k = new KernelInfo;
  // A collective is named as NCCL's kernels are (what a profiler sees for an all-reduce on a real
  // GPU); the caller's name is the group it synchronises.
  k->name = collective ? kCollectiveKernelName : name ? name : "simgpu_kernel";
  if (collective) k->group = name ? name : "";
  k->demangled = Demangle(k->name.c_str());
  ModelKernelDuration(k->name, k->demangled, &k->faults);  // SIMGPU_FAULT_KERNEL still applies
  k->duration_ns = duration_ns;  // exact: the env override does not apply
  k->collective = collective;
  r.synthetic[key] = k;
  r.by_func[k] = k;
  r.handles.insert(k);
  return k;
}

const KernelInfo* ModuleKernel(const void* module, const char* name,
                               const KernelResources* resources) {
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  auto key = std::make_pair(module, std::string(name ? name : ""));
  auto it = r.module_functions.find(key);
  if (it != r.module_functions.end()) return it->second;
  auto* k = new KernelInfo;
  ApplyResources(k, resources);
  k->name = key.second;
  k->demangled = Demangle(k->name.c_str());
  k->duration_ns = ModelKernelDuration(k->name, k->demangled, &k->faults);
  k->collective = false;
  r.module_functions[key] = k;
  r.by_func[k] = k;  // the CUfunction handle is the KernelInfo itself
  r.handles.insert(k);
  return k;
}

const KernelInfo* FindKernel(const void* func) {
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  return FindLocked(r, func);
}

namespace {
// The bounds a cubin's own values keep: at most 255 registers per thread (the Programming Guide's
// "Maximum number of 32-bit registers per thread", every compute capability since 3.5) and 48 KiB
// of static shared memory (ptxas: "uses too much shared data (0xc004 bytes, 0xc000 max)" for a
// 49156-byte __shared__ array; more needs dynamic shared memory and opting in).
constexpr int kMaxRegistersPerThread = 255;
}  // namespace

int DeclareKernelResources(const void* func, int registers_per_thread,
                           size_t static_shared_bytes) {
  if (registers_per_thread < 1 || registers_per_thread > kMaxRegistersPerThread ||
      static_shared_bytes > kSharedMemPerBlock) {
    return -1;
  }
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  KernelInfo* k = FindLocked(r, func);
  if (k == nullptr) return -1;
  KernelResources resources;
  resources.registers_per_thread = static_cast<uint32_t>(registers_per_thread);
  resources.static_shared_bytes = static_cast<uint32_t>(static_shared_bytes);
  ApplyResources(k, &resources);
  return 0;
}

uint32_t MaxDynamicSharedBytes(const KernelInfo* k) {
  const int32_t set = k->max_dynamic_shared_bytes.load(std::memory_order_relaxed);
  if (set >= 0) return static_cast<uint32_t>(set);
  const uint32_t static_bytes = k->static_shared_bytes.load(std::memory_order_relaxed);
  return static_bytes < kSharedMemPerBlock ? kSharedMemPerBlock - static_bytes : 0;
}

cudaError_t SetMaxDynamicSharedBytes(const KernelInfo* k, int value) {
  if (k == nullptr) return cudaErrorInvalidDeviceFunction;
  const uint64_t static_bytes = k->static_shared_bytes.load(std::memory_order_relaxed);
  if (value < 0 || static_cast<uint64_t>(value) + static_bytes > kSharedMemPerBlockOptin) {
    return cudaErrorInvalidValue;
  }
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  KernelInfo* writable = FindLocked(r, k);  // every kernel is its own handle in by_func
  if (writable == nullptr) return cudaErrorInvalidDeviceFunction;
  writable->max_dynamic_shared_bytes.store(value, std::memory_order_relaxed);
  return cudaSuccess;
}

}  // namespace simgpu
