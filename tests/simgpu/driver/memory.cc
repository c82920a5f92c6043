// memory.cc — device, managed and pinned host memory, and the pointer registry.
//
// Every device or managed allocation is backed by an anonymous private mapping of host memory
// (MAP_NORESERVE, so a large cudaMalloc costs nothing until its pages are touched): copies move
// real bytes. The "device pointer" is the mapping's address, so a device pointer is a valid host
// address in this process and pointer classification is a range lookup.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <iterator>
#include <map>
#include <mutex>
#include <vector>

#include "driver/api_scope.h"
#include "driver/internal.h"

namespace simgpu {
namespace {

struct Allocation {
  size_t size;
  size_t mapped;     // bytes mapped (page-rounded); 0 for cudaHostRegister'ed ranges
  MemKind kind;
  int device;        // -1 for pinned host memory
  bool registered;   // cudaHostRegister: the caller owns the memory
};

struct MemoryState {
  std::mutex mu;
  std::map<uintptr_t, Allocation> allocations;  // keyed by base address
  std::vector<size_t> used;                      // device + managed bytes per device
  size_t capacity;
};

MemoryState& Mem() {
  static MemoryState* m = [] {
    auto* s = new MemoryState;  // never freed: pointers may be freed during exit
    s->used.assign(static_cast<size_t>(std::max(GetConfig().devices, 1)), 0);
    s->capacity = GetConfig().memory_bytes;
    return s;
  }();
  return *m;
}

size_t PageRound(size_t n) {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (n + page - 1) / page * page;
}

void* MapAnonymous(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void ReportMemory(SimgpuOpKind kind, MemKind mem, int device, uintptr_t address, size_t bytes,
                  uint32_t corr, const char* api) {
  uint64_t now = NowNs();
  SimgpuOpRecord r{};
  r.kind = kind;
  r.device_id = device < 0 ? 0 : static_cast<uint32_t>(device);
  r.context_id = ContextId(device < 0 ? 0 : device);
  r.stream_id = 0xFFFFFFFFu;
  r.start_ns = r.end_ns = now;
  r.bytes = bytes;
  r.correlation_id = corr;
  r.memory_kind = static_cast<uint32_t>(mem);
  r.address = address;
  r.event_id = 0xFFFFFFFFu;
  OpTruthExtra x;
  x.submit_ns = now;
  x.submit_tid = CurrentTid();
  // A driver-API allocation (cuMemAlloc_v2, ...) names itself; the runtime's keep their names.
  const ApiFrame& outer = OutermostApi();
  x.api = outer.domain == kDomainDriver ? outer.name : api;
  x.submit_api = outer.name;
  x.submit_domain = outer.domain;
  ReportOp(r, x);
}

}  // namespace

// ---- virtual memory management (driver.h) -------------------------------------------------------
// CUresult values returned here (cuda.h): the driver API functions return them as they are.
namespace {
constexpr int kCuSuccess = 0, kCuInvalidValue = 1, kCuOutOfMemory = 2;

struct Physical {
  int device;
  size_t size;
  int mappings = 0;
  bool released = false;  // freed once its last mapping goes (cuMemRelease's documented rule)
};

struct VmmState {
  std::map<uintptr_t, size_t> reserved;          // base -> size (PROT_NONE address space)
  std::map<uintptr_t, uint64_t> mapped;          // mapping base -> handle
  std::map<uint64_t, Physical> physical;         // handle -> allocation
  uint64_t next_handle = 1;
};

VmmState& Vmm() {  // guarded by Mem().mu
  static auto* v = new VmmState;
  return *v;
}

bool Granular(size_t n) { return n != 0 && n % kVmmGranularity == 0; }

// The reservation holding [ptr, ptr + size), or reserved.end().
std::map<uintptr_t, size_t>::iterator ReservationOf(VmmState& v, uintptr_t ptr, size_t size) {
  auto it = v.reserved.upper_bound(ptr);
  if (it == v.reserved.begin()) return v.reserved.end();
  --it;
  return ptr + size <= it->first + it->second ? it : v.reserved.end();
}

void FreePhysicalLocked(MemoryState& m, VmmState& v, std::map<uint64_t, Physical>::iterator it) {
  m.used[it->second.device] -= it->second.size;
  v.physical.erase(it);
}
}  // namespace

int VmmReserve(size_t size, size_t alignment, uintptr_t* out) {
  if (!Granular(size) || (alignment != 0 && alignment % kVmmGranularity != 0)) return kCuInvalidValue;
  const size_t align = alignment != 0 ? alignment : kVmmGranularity;
  // Address space only: PROT_NONE until a mapping makes part of it device memory.
  void* p = mmap(nullptr, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return kCuOutOfMemory;
  const uintptr_t raw = reinterpret_cast<uintptr_t>(p);
  const uintptr_t base = (raw + align - 1) / align * align;
  if (base > raw) munmap(p, base - raw);
  if (raw + size + align > base + size) munmap(reinterpret_cast<void*>(base + size), raw + size + align - base - size);
  MemoryState& m = Mem();
  std::lock_guard<std::mutex> lock(m.mu);
  Vmm().reserved[base] = size;
  *out = base;
  return kCuSuccess;
}

int VmmFree(uintptr_t base, size_t size) {
  MemoryState& m = Mem();
  VmmState& v = Vmm();
  {
    std::lock_guard<std::mutex> lock(m.mu);
    auto it = v.reserved.find(base);
    if (it == v.reserved.end() || it->second != size) return kCuInvalidValue;
    auto mapped = v.mapped.lower_bound(base);
    if (mapped != v.mapped.end() && mapped->first < base + size) return kCuInvalidValue;  // still mapped
    v.reserved.erase(it);
  }
  munmap(reinterpret_cast<void*>(base), size);
  return kCuSuccess;
}

int VmmCreate(int device, size_t size, uint64_t* handle) {
  if (!Granular(size)) return kCuInvalidValue;
  MemoryState& m = Mem();
  std::lock_guard<std::mutex> lock(m.mu);
  if (device < 0 || static_cast<size_t>(device) >= m.used.size()) return kCuInvalidValue;
  if (m.used[device] + size > m.capacity) return kCuOutOfMemory;
  m.used[device] += size;
  VmmState& v = Vmm();
  *handle = v.next_handle++;
  v.physical[*handle] = Physical{device, size};
  return kCuSuccess;
}

int VmmRelease(uint64_t handle) {
  MemoryState& m = Mem();
  VmmState& v = Vmm();
  std::lock_guard<std::mutex> lock(m.mu);
  auto it = v.physical.find(handle);
  if (it == v.physical.end() || it->second.released) return kCuInvalidValue;
  it->second.released = true;
  if (it->second.mappings == 0) FreePhysicalLocked(m, v, it);
  return kCuSuccess;
}

int VmmMap(uintptr_t ptr, size_t size, size_t offset, uint64_t handle) {
  MemoryState& m = Mem();
  VmmState& v = Vmm();
  std::lock_guard<std::mutex> lock(m.mu);
  auto phys = v.physical.find(handle);
  // "offset ... currently must be zero"; the whole allocation is mapped.
  if (phys == v.physical.end() || phys->second.released || offset != 0 || size != phys->second.size ||
      ptr % kVmmGranularity != 0 || ReservationOf(v, ptr, size) == v.reserved.end())
    return kCuInvalidValue;
  auto next = v.mapped.lower_bound(ptr);
  if (next != v.mapped.end() && next->first < ptr + size) return kCuInvalidValue;  // overlaps a mapping
  if (next != v.mapped.begin()) {
    auto prev = std::prev(next);
    if (prev->first + v.physical[prev->second].size > ptr) return kCuInvalidValue;
  }
  if (mprotect(reinterpret_cast<void*>(ptr), size, PROT_READ | PROT_WRITE) != 0) return kCuOutOfMemory;
  v.mapped[ptr] = handle;
  ++phys->second.mappings;
  // mapped 0: the address space is the reservation's, never munmap'ed by DeviceFree.
  m.allocations[ptr] = Allocation{size, 0, MemKind::kDevice, phys->second.device, false};
  return kCuSuccess;
}

int VmmUnmap(uintptr_t ptr, size_t size) {
  MemoryState& m = Mem();
  VmmState& v = Vmm();
  std::lock_guard<std::mutex> lock(m.mu);
  auto it = v.mapped.find(ptr);
  // "The range must be the entire contiguous address range that was mapped to."
  if (it == v.mapped.end()) return kCuInvalidValue;
  auto phys = v.physical.find(it->second);
  if (phys == v.physical.end() || phys->second.size != size) return kCuInvalidValue;
  // The physical memory leaves the range: its pages go back to the host (a later mapping of new
  // memory reads zeros, as fresh memory may), and the range is address space only again.
  madvise(reinterpret_cast<void*>(ptr), size, MADV_DONTNEED);
  mprotect(reinterpret_cast<void*>(ptr), size, PROT_NONE);
  v.mapped.erase(it);
  m.allocations.erase(ptr);
  if (--phys->second.mappings == 0 && phys->second.released) FreePhysicalLocked(m, v, phys);
  return kCuSuccess;
}

int VmmCheckMapped(uintptr_t ptr, size_t size) {
  MemoryState& m = Mem();
  VmmState& v = Vmm();
  std::lock_guard<std::mutex> lock(m.mu);
  for (uintptr_t at = ptr; at < ptr + size;) {
    auto it = v.mapped.upper_bound(at);
    if (it == v.mapped.begin()) return kCuInvalidValue;
    --it;
    const size_t len = v.physical[it->second].size;
    if (at >= it->first + len) return kCuInvalidValue;
    at = it->first + len;
  }
  return size == 0 ? kCuInvalidValue : kCuSuccess;
}

PointerInfo ClassifyPointer(const void* p) {
  PointerInfo info;
  if (p == nullptr) return info;
  MemoryState& m = Mem();
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(m.mu);
  auto it = m.allocations.upper_bound(a);
  if (it == m.allocations.begin()) return info;
  --it;
  if (a >= it->first + std::max<size_t>(it->second.size, 1)) return info;
  info.kind = it->second.kind;
  info.device = it->second.device;
  info.base = it->first;
  info.size = it->second.size;
  info.registered = it->second.registered;
  // VMM mappings (mapped 0, device memory) that follow each other in the address space are one
  // range for a copy or memset, as they are on a GPU: expandable segments rely on it.
  if (it->second.mapped == 0 && it->second.kind == MemKind::kDevice) {
    for (auto next = std::next(it); next != m.allocations.end() && next->first == info.base + info.size &&
                                    next->second.mapped == 0 && next->second.kind == MemKind::kDevice &&
                                    next->second.device == info.device;
         ++next)
      info.size += next->second.size;
  }
  return info;
}

size_t DeviceMemoryUsed(int device) {
  MemoryState& m = Mem();
  std::lock_guard<std::mutex> lock(m.mu);
  return device >= 0 && static_cast<size_t>(device) < m.used.size() ? m.used[device] : 0;
}

cudaError_t DeviceMalloc(int device, size_t size, bool managed, bool async, uint32_t corr,
                         void** out) {
  *out = nullptr;
  if (size == 0) return cudaSuccess;  // as the real one: success and a NULL pointer
  MemoryState& m = Mem();
  {
    std::lock_guard<std::mutex> lock(m.mu);
    if (m.used[device] + size > m.capacity || m.used[device] + size < size) {
      return cudaErrorMemoryAllocation;
    }
    m.used[device] += size;  // reserved before mapping so concurrent callers see it
  }
  size_t mapped = PageRound(size);
  void* p = MapAnonymous(mapped);
  {
    std::lock_guard<std::mutex> lock(m.mu);
    if (p == nullptr) {
      m.used[device] -= size;
      return cudaErrorMemoryAllocation;
    }
    m.allocations[reinterpret_cast<uintptr_t>(p)] =
        Allocation{size, mapped, managed ? MemKind::kManaged : MemKind::kDevice, device, false};
  }
  *out = p;
  ReportMemory(SIMGPU_OP_MEMORY_ALLOC, managed ? MemKind::kManaged : MemKind::kDevice, device,
               reinterpret_cast<uintptr_t>(p), size, corr,
               managed ? "cudaMallocManaged" : (async ? "cudaMallocAsync" : "cudaMalloc"));
  return cudaSuccess;
}

cudaError_t DeviceFree(void* p, uint32_t corr) {
  if (p == nullptr) return cudaSuccess;
  MemoryState& m = Mem();
  Allocation a;
  {
    std::lock_guard<std::mutex> lock(m.mu);
    auto it = m.allocations.find(reinterpret_cast<uintptr_t>(p));
    // mapped 0: a VMM mapping (cuMemMap), which only cuMemUnmap undoes.
    if (it == m.allocations.end() || it->second.mapped == 0 ||
        (it->second.kind != MemKind::kDevice && it->second.kind != MemKind::kManaged)) {
      return cudaErrorInvalidValue;
    }
    a = it->second;
    m.allocations.erase(it);
    m.used[a.device] -= a.size;
  }
  munmap(p, a.mapped);
  ReportMemory(SIMGPU_OP_MEMORY_FREE, a.kind, a.device, reinterpret_cast<uintptr_t>(p), a.size,
               corr, "cudaFree");
  return cudaSuccess;
}

void FreeAllOnDevice(int device) {
  MemoryState& m = Mem();
  std::vector<std::pair<uintptr_t, Allocation>> victims;
  {
    std::lock_guard<std::mutex> lock(m.mu);
    for (auto it = m.allocations.begin(); it != m.allocations.end();) {
      if (it->second.device == device) {
        victims.push_back(*it);
        m.used[device] -= it->second.size;
        it = m.allocations.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& v : victims) munmap(reinterpret_cast<void*>(v.first), v.second.mapped);
}

cudaError_t HostAllocPinned(size_t size, uint32_t corr, void** out) {
  *out = nullptr;
  size_t mapped = PageRound(std::max<size_t>(size, 1));
  void* p = MapAnonymous(mapped);
  if (p == nullptr) return cudaErrorMemoryAllocation;
  {
    MemoryState& m = Mem();
    std::lock_guard<std::mutex> lock(m.mu);
    m.allocations[reinterpret_cast<uintptr_t>(p)] =
        Allocation{size, mapped, MemKind::kPinned, -1, false};
  }
  *out = p;
  ReportMemory(SIMGPU_OP_MEMORY_ALLOC, MemKind::kPinned, -1, reinterpret_cast<uintptr_t>(p), size,
               corr, "cudaHostAlloc");
  return cudaSuccess;
}

cudaError_t HostFreePinned(void* p, uint32_t corr) {
  if (p == nullptr) return cudaSuccess;
  MemoryState& m = Mem();
  Allocation a;
  {
    std::lock_guard<std::mutex> lock(m.mu);
    auto it = m.allocations.find(reinterpret_cast<uintptr_t>(p));
    if (it == m.allocations.end() || it->second.kind != MemKind::kPinned ||
        it->second.registered) {
      return cudaErrorInvalidValue;
    }
    a = it->second;
    m.allocations.erase(it);
  }
  munmap(p, a.mapped);
  ReportMemory(SIMGPU_OP_MEMORY_FREE, MemKind::kPinned, -1, reinterpret_cast<uintptr_t>(p), a.size,
               corr, "cudaFreeHost");
  return cudaSuccess;
}

cudaError_t HostRegister(void* p, size_t size, uint32_t corr) {
  (void)corr;
  if (p == nullptr || size == 0) return cudaErrorInvalidValue;
  MemoryState& m = Mem();
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(m.mu);
  auto it = m.allocations.lower_bound(a);
  if (it != m.allocations.end() && it->first < a + size) return cudaErrorHostMemoryAlreadyRegistered;
  if (it != m.allocations.begin()) {
    --it;
    if (it->first + it->second.size > a) return cudaErrorHostMemoryAlreadyRegistered;
  }
  m.allocations[a] = Allocation{size, 0, MemKind::kPinned, -1, true};
  return cudaSuccess;
}

cudaError_t HostUnregister(void* p, uint32_t corr) {
  (void)corr;
  MemoryState& m = Mem();
  std::lock_guard<std::mutex> lock(m.mu);
  auto it = m.allocations.find(reinterpret_cast<uintptr_t>(p));
  if (it == m.allocations.end() || !it->second.registered) return cudaErrorHostMemoryNotRegistered;
  m.allocations.erase(it);
  return cudaSuccess;
}

void MemInfo(int device, size_t* free_bytes, size_t* total_bytes) {
  MemoryState& m = Mem();
  std::lock_guard<std::mutex> lock(m.mu);
  size_t used = m.used[device];
  *total_bytes = m.capacity;
  *free_bytes = m.capacity > used ? m.capacity - used : 0;
}

int SetMemoryCapacity(size_t bytes) {
  MemoryState& m = Mem();
  std::lock_guard<std::mutex> lock(m.mu);
  for (size_t used : m.used) {
    if (used > bytes) return -1;
  }
  m.capacity = bytes;
  return 0;
}

}  // namespace simgpu
