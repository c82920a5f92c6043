// api_launch.cc — kernel launches and the entry points nvcc's generated host code calls.
//
// nvcc 13 (--cudart=shared) emits, per translation unit: a static constructor calling
// __cudaRegisterFatBinary / __cudaRegisterFunction(hostFun, deviceName=mangled name) /
// __cudaRegisterFatBinaryEnd, and for each <<<>>>: __cudaPushCallConfiguration, then in the stub
// __cudaGetKernel(&handle, hostFun) (once), __cudaPopCallConfiguration and
// __cudaLaunchKernel(handle, ...) (or _ptsz under --default-stream per-thread).
//
// Registration never initialises the driver (it runs before main) and is not reported to tools.
// The registered fatbinary (behind nvcc's __fatBinC_Wrapper_t) is read, at the first
// __cudaRegisterFunction of its translation unit, for its kernels' registers and static shared
// memory (cuda/cubin.h), as the real driver knows them once it loads the module.
// Push/Pop/GetKernel are not reported either; __cudaLaunchKernel(_ptsz) is, with cbid
// __cudaLaunchKernel_v13000 (505) / _ptsz_v13000 (506). generated_cuda_runtime_api_meta.h has no
// params struct for it; simgpu passes a cudaLaunchKernel_v7000_params whose `func` holds the
// cudaKernel_t (same layout as the arguments; see tool_hooks.h).
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cuda/cubin.h"
#include "cudart/driver_calls.h"
#include "cudart/launch.h"

using simgpu::ApiCall;

namespace simgpu {

cudaError_t LaunchKernel(ApiCall& call, const KernelInfo* kernel, dim3 grid, dim3 block,
                         size_t shared_mem, cudaStream_t stream, bool per_thread_default,
                         void** args) {
  if (kernel == nullptr) return cudaErrorInvalidDeviceFunction;  // never reaches the driver
  // The launch itself is the driver's cuLaunchKernel, reported inside this runtime call.
  return NestedLaunch(kernel, grid, block, shared_mem, stream, args, per_thread_default,
                      call.device(), [&]() -> cudaError_t {
    uint64_t threads = static_cast<uint64_t>(block.x) * block.y * block.z;
    if (threads == 0 || threads > 1024 || block.x > 1024 || block.y > 1024 || block.z > 64 ||
        grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > 2147483647u || grid.y > 65535 ||
        grid.z > 65535) {
      return cudaErrorInvalidConfiguration;
    }
    // More dynamic shared memory than the kernel's limit: 48 KiB less its static shared memory
    // unless cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize) raised it.
    if (shared_mem > MaxDynamicSharedBytes(kernel)) return cudaErrorInvalidValue;
    Stream* s = ResolveStream(call.device(), stream, per_thread_default);
    if (s == nullptr) return cudaErrorInvalidResourceHandle;
    return SubmitKernel(s, LaunchArgs{kernel, grid, block, shared_mem}, call.correlation_id());
  });
}

}  // namespace simgpu

namespace {

struct CallConfiguration {
  dim3 grid, block;
  size_t shared_mem;
  cudaStream_t stream;
};

std::vector<CallConfiguration>& ConfigStack() {
  static thread_local std::vector<CallConfiguration> stack;
  return stack;
}

// What __cudaRegisterFatBinary returns: the translation unit's fatbinary (behind nvcc's wrapper)
// and, read from it at the first __cudaRegisterFunction, its kernels' resources (cuda/cubin.h).
struct FatBinaryHandle {
  void* fat_cubin;
  std::once_flag read_once;
  std::unordered_map<std::string, simgpu::CubinKernel> kernels;  // by name; empty: no cubin read
};

// The resources the registered fatbinary's cubin gives `device_name`; false when it gives none.
bool ResourcesFromFatbinary(FatBinaryHandle* h, const char* device_name,
                            simgpu::KernelResources* resources) {
  std::call_once(h->read_once, [h] {
    const void* fatbinary = simgpu::FatbinaryOfWrapper(h->fat_cubin);
    if (fatbinary == nullptr) return;
    std::vector<simgpu::CubinKernel> kernels;
    if (simgpu::ReadModuleKernels(fatbinary, SIZE_MAX, &kernels) != simgpu::ImageStatus::kOk) {
      return;
    }
    for (const simgpu::CubinKernel& k : kernels) h->kernels.emplace(k.name, k);
  });
  if (device_name == nullptr) return false;
  auto it = h->kernels.find(device_name);
  if (it == h->kernels.end()) return false;
  if (it->second.registers_per_thread > 0) {
    resources->registers_per_thread = static_cast<uint32_t>(it->second.registers_per_thread);
  }
  resources->static_shared_bytes = it->second.static_shared_bytes;
  return true;
}

cudaError_t LaunchInternal(uint32_t cbid, const char* name, cudaKernel_t kernel, dim3 gridDim,
                           dim3 blockDim, void** args, size_t sharedMem, cudaStream_t stream,
                           bool per_thread) {
  const simgpu::KernelInfo* k = simgpu::FindKernel(kernel);
  cudaLaunchKernel_v7000_params params{kernel, gridDim, blockDim, args, sharedMem, stream};
  ApiCall call(cbid, name, &params, ApiCall::kInitAndSticky, k ? k->name.c_str() : nullptr);
  if (call.early_error() != cudaSuccess) return call.Finish(call.early_error());
  return call.Finish(
      simgpu::LaunchKernel(call, k, gridDim, blockDim, sharedMem, stream, per_thread, args));
}

}  // namespace

extern "C" {

// Declared here: host_runtime.h declares these only for nvcc-generated code.
void** __cudaRegisterFatBinary(void* fatCubin);
void __cudaRegisterFatBinaryEnd(void** fatCubinHandle);
void __cudaUnregisterFatBinary(void** fatCubinHandle);
void __cudaRegisterFunction(void** fatCubinHandle, const char* hostFun, char* deviceFun,
                            const char* deviceName, int thread_limit, uint3* tid, uint3* bid,
                            dim3* bDim, dim3* gDim, int* wSize);
void __cudaRegisterVar(void** fatCubinHandle, char* hostVar, char* deviceAddress,
                       const char* deviceName, int ext, size_t size, int constant, int global);
void __cudaRegisterManagedVar(void** fatCubinHandle, void** hostVarPtrAddress, char* deviceAddress,
                              const char* deviceName, int ext, size_t size, int constant,
                              int global);
void __cudaRegisterHostVar(void** fatCubinHandle, const char* deviceName, char* hostVar,
                           size_t size);
void __cudaRegisterUnifiedTable(void** fatCubinHandle, const char** names, void** addresses,
                                size_t count);
char __cudaInitModule(void** fatCubinHandle);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                     struct CUstream_st* stream);
cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem,
                                       void* stream);
cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* hostFun);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                               size_t sharedMem, cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                                    size_t sharedMem, cudaStream_t stream);

void** __cudaRegisterFatBinary(void* fatCubin) {
  // Handles live until exit (modules are never unloaded), listed so they stay reachable.
  static std::mutex mu;
  static auto* all = new std::vector<std::unique_ptr<FatBinaryHandle>>;
  std::lock_guard<std::mutex> lock(mu);
  all->push_back(std::make_unique<FatBinaryHandle>());
  all->back()->fat_cubin = fatCubin;
  return reinterpret_cast<void**>(all->back().get());
}

void __cudaRegisterFatBinaryEnd(void** fatCubinHandle) { (void)fatCubinHandle; }

void __cudaUnregisterFatBinary(void** fatCubinHandle) { (void)fatCubinHandle; }

void __cudaRegisterFunction(void** fatCubinHandle, const char* hostFun, char* deviceFun,
                            const char* deviceName, int thread_limit, uint3* tid, uint3* bid,
                            dim3* bDim, dim3* gDim, int* wSize) {
  (void)deviceFun; (void)thread_limit; (void)tid; (void)bid; (void)bDim; (void)gDim; (void)wSize;
  // Registers and static shared memory as the fatbinary's cubin gives them, as the real driver
  // knows them when it loads the module; without a readable cubin, the defaults (driver.h).
  simgpu::KernelResources resources;
  bool known = fatCubinHandle != nullptr &&
               ResourcesFromFatbinary(reinterpret_cast<FatBinaryHandle*>(fatCubinHandle),
                                      deviceName, &resources);
  simgpu::RegisterKernel(hostFun, deviceName, known ? &resources : nullptr);
}

void __cudaRegisterVar(void** fatCubinHandle, char* hostVar, char* deviceAddress,
                       const char* deviceName, int ext, size_t size, int constant, int global) {
  (void)fatCubinHandle; (void)deviceAddress; (void)ext; (void)constant; (void)global;
  simgpu::RegisterSymbol(hostVar, deviceName, size);
}

void __cudaRegisterManagedVar(void** fatCubinHandle, void** hostVarPtrAddress, char* deviceAddress,
                              const char* deviceName, int ext, size_t size, int constant,
                              int global) {
  (void)fatCubinHandle; (void)hostVarPtrAddress; (void)deviceAddress; (void)deviceName; (void)ext;
  (void)size; (void)constant; (void)global;
}

void __cudaRegisterHostVar(void** fatCubinHandle, const char* deviceName, char* hostVar,
                           size_t size) {
  (void)fatCubinHandle; (void)deviceName; (void)hostVar; (void)size;
}

void __cudaRegisterUnifiedTable(void** fatCubinHandle, const char** names, void** addresses,
                                size_t count) {
  (void)fatCubinHandle; (void)names; (void)addresses; (void)count;
}

char __cudaInitModule(void** fatCubinHandle) {
  (void)fatCubinHandle;
  return 1;
}

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                     struct CUstream_st* stream) {
  ConfigStack().push_back({gridDim, blockDim, sharedMem, stream});
  return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem,
                                       void* stream) {
  auto& stack = ConfigStack();
  if (stack.empty()) return cudaErrorMissingConfiguration;
  CallConfiguration c = stack.back();
  stack.pop_back();
  *gridDim = c.grid;
  *blockDim = c.block;
  *sharedMem = c.shared_mem;
  *static_cast<cudaStream_t*>(stream) = c.stream;
  return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* hostFun) {
  const simgpu::KernelInfo* k = simgpu::FindKernel(hostFun);
  if (kernel == nullptr) return cudaErrorInvalidValue;
  *kernel = reinterpret_cast<cudaKernel_t>(const_cast<simgpu::KernelInfo*>(k));
  return k ? cudaSuccess : cudaErrorInvalidDeviceFunction;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                               size_t sharedMem, cudaStream_t stream) {
  return LaunchInternal(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
                        "__cudaLaunchKernel_v13000", kernel, gridDim, blockDim, args, sharedMem,
                        stream, false);
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                                    size_t sharedMem, cudaStream_t stream) {
  return LaunchInternal(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
                        "__cudaLaunchKernel_ptsz_v13000", kernel, gridDim, blockDim, args,
                        sharedMem, stream, true);
}

cudaError_t cudaGetKernel(cudaKernel_t* kernelPtr, const void* entryFuncAddr) {
  SG_API(cudaGetKernel_v12000, kernelPtr, entryFuncAddr);
  return call.Finish(__cudaGetKernel(kernelPtr, entryFuncAddr));
}

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func) {
  SG_API(cudaFuncGetAttributes_v3020, attr, func);
  if (attr == nullptr) return call.Finish(cudaErrorInvalidValue);
  const simgpu::KernelInfo* k = simgpu::FindKernel(func);
  if (k == nullptr) return call.Finish(cudaErrorInvalidDeviceFunction);
  std::memset(attr, 0, sizeof *attr);
  attr->maxThreadsPerBlock = 1024;
  attr->sharedSizeBytes = k->static_shared_bytes.load(std::memory_order_relaxed);
  attr->numRegs = static_cast<int>(k->registers_per_thread.load(std::memory_order_relaxed));
  attr->ptxVersion = 90;
  attr->binaryVersion = 90;
  attr->maxDynamicSharedSizeBytes = static_cast<int>(simgpu::MaxDynamicSharedBytes(k));
  return call.Finish(cudaSuccess);
}

cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
  SG_API(cudaFuncSetAttribute_v9000, func, attr, value);
  const simgpu::KernelInfo* k = simgpu::FindKernel(func);
  if (k == nullptr) return call.Finish(cudaErrorInvalidDeviceFunction);
  if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
    return call.Finish(simgpu::SetMaxDynamicSharedBytes(k, value));
  }
  return call.Finish(cudaSuccess);
}

cudaError_t cudaFuncGetName(const char** name, const void* func) {
  SG_API(cudaFuncGetName_v12030, name, func);
  const simgpu::KernelInfo* k = simgpu::FindKernel(func);
  if (name == nullptr) return call.Finish(cudaErrorInvalidValue);
  if (k == nullptr) return call.Finish(cudaErrorInvalidDeviceFunction);
  *name = k->name.c_str();
  return call.Finish(cudaSuccess);
}

}  // extern "C"
