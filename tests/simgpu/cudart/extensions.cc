// extensions.cc — simgpu.h: calls that exist only on simgpu, for test programs.
// Exported under their own version node SIMGPU_1 (see libcudart.map), so they are never mistaken
// for CUDA symbols; ctypes and dlsym find them by plain name.
#include "simgpu.h"

#include "driver/driver.h"

#define SIMGPU_EXPORT __attribute__((visibility("default")))

extern "C" {

SIMGPU_EXPORT const void* simgpuKernel(const char* name, uint64_t duration_ns) {
  return simgpu::SyntheticKernel(name, duration_ns, false);
}

SIMGPU_EXPORT const void* simgpuCollective(const char* group, uint64_t duration_ns) {
  // The rendezvous across processes happens when a launch of it is scheduled (timeline.cc).
  return simgpu::SyntheticKernel(group, duration_ns, true);
}

SIMGPU_EXPORT int simgpuKernelResources(const void* kernel, int registers_per_thread,
                                        size_t static_shared_bytes) {
  return simgpu::DeclareKernelResources(kernel, registers_per_thread, static_shared_bytes);
}

SIMGPU_EXPORT int simgpuSetCopyBandwidth(int memcpy_kind, int pinned, double bytes_per_second) {
  return simgpu::SetCopyBandwidth(memcpy_kind, pinned, bytes_per_second);
}

SIMGPU_EXPORT int simgpuSetMemoryCapacity(size_t bytes) {
  if (simgpu::EnsureInitialized() != cudaSuccess) return -1;
  return simgpu::SetMemoryCapacity(bytes);
}

SIMGPU_EXPORT uint64_t simgpuNowNs(void) { return simgpu::NowNs(); }

}  // extern "C"
