#include "agent/capture/cuda_device.h"

#include <cuda.h>
#include <dlfcn.h>

#include "agent/capture/capture_thread_state.h"
#include "agent/core/fork_gate.h"

namespace gs {
namespace {

using GetFn = CUresult (*)(CUdevice*, int);
using AttributeFn = CUresult (*)(int*, CUdevice_attribute, CUdevice);
using NameFn = CUresult (*)(char*, int, CUdevice);
using TotalMemFn = CUresult (*)(size_t*, CUdevice);

struct Driver {
  GetFn get = nullptr;
  AttributeFn attribute = nullptr;
  NameFn name = nullptr;
  TotalMemFn total_mem = nullptr;
};

// The mapped driver's functions, looked up once (a driver is never unmapped while a process has
// contexts; one mapped later, after a first failed look, is found on the next call).
// The loader's lock is taken by dlopen, dlsym and dlclose: under the fork gate, so that a child
// forked meanwhile does not inherit it held (fork_gate.h).
bool FindDriver(Driver* d) {
  MutexLock gate(&g_fork_gate);
  void* handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  d->get = reinterpret_cast<GetFn>(dlsym(handle, "cuDeviceGet"));
  d->attribute = reinterpret_cast<AttributeFn>(dlsym(handle, "cuDeviceGetAttribute"));
  d->name = reinterpret_cast<NameFn>(dlsym(handle, "cuDeviceGetName"));
  d->total_mem = reinterpret_cast<TotalMemFn>(dlsym(handle, "cuDeviceTotalMem_v2"));
  dlclose(handle);  // drops only our reference: the process's own keeps it mapped
  return d->get != nullptr && d->attribute != nullptr;
}

}  // namespace

bool DescribeCudaDevice(uint32_t ordinal, CudaDeviceDescription* out) {
  Driver d;
  if (!FindDriver(&d)) return false;
  // The agent's own questions: CUPTI's driver callbacks see them as calls of this thread, which
  // the agent must not record (the writer may drain on an application thread at exit).
  ScopedAgentCudaCall own;
  CUdevice dev = 0;
  if (d.get(&dev, static_cast<int>(ordinal)) != CUDA_SUCCESS) return false;
  auto attr = [&](CUdevice_attribute a, int* v) { return d.attribute(v, a, dev) == CUDA_SUCCESS; };
  if (!attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &out->sm_count)) return false;
  attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &out->cc_major);
  attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &out->cc_minor);
  attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &out->max_threads_per_block);
  attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, &out->max_threads_per_sm);
  attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE, &out->warp_size);
  attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, &out->registers_per_block);
  attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, &out->registers_per_sm);
  attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, &out->max_blocks_per_sm);
  attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &out->shared_per_block);
  attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &out->shared_per_block_optin);
  attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, &out->shared_per_sm);
  out->has_reserved_shared = attr(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, &out->reserved_shared_per_block);
  if (d.name != nullptr && d.name(out->name, sizeof(out->name) - 1, dev) != CUDA_SUCCESS) out->name[0] = '\0';
  size_t bytes = 0;
  if (d.total_mem != nullptr && d.total_mem(&bytes, dev) == CUDA_SUCCESS) out->total_memory = bytes;
  return true;
}

}  // namespace gs
