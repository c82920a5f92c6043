// api_driver.cc — simgpu's libcuda.so.1: the CUDA driver API entry points a JIT launcher (Triton)
// and a library (cuBLAS-style, through cuGetProcAddress) use, on simgpu's device model.
//
// Every entry point is exported under the name the real libcuda.so.1 exports (cuda.h's macros
// map cuMemAlloc -> cuMemAlloc_v2, cuLaunchKernel -> cuLaunchKernel_ptsz under per-thread default
// streams, ...), and reports itself to the tool hooks in CUPTI's DRIVER_API domain with its real
// cbid (cupti_driver_cbid.h), CUPTI's function name (the cbid enumerator without its prefix) and
// its real params struct (generated_cuda_meta.h). Correlation ids: api_scope.h.
//
// Semantics are the runtime's (README.md "The model"): the same timeline, kernel duration model
// (by the kernel's mangled name from the cubin), copy bandwidths, pageable staging and host
// blocking ("API synchronization behavior" applies to both APIs), implicit synchronisation of
// allocations and frees.
#include <cuda.h>
// cupti.h: the driver cbids and, with the stand-ins it declares for obsolete types, the
// <api>_params structs of generated_cuda_meta.h (header only; nothing links libcupti).
#include <cupti.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda/cubin.h"
#include "cuda/driver_exports.h"
#include "driver/api_scope.h"
#include "driver/driver.h"

// Entry points defined here under their unversioned names, which cuda.h maps to _v2.
#undef cuEventElapsedTime

using simgpu::DriverCall;

namespace simgpu {

CUresult ToCu(cudaError_t e) { return static_cast<CUresult>(CuResultOf(e)); }

namespace {

void PayHostCost(uint64_t ns) { WaitUntilNs(NowNs() + ns); }

// The calling thread's context: its device, or CUDA_ERROR_INVALID_CONTEXT without one; a context
// with a sticky error answers that error (as every later call on a real one does).
CUresult CurrentContext(int* device) {
  int d = BoundContextDevice();
  if (d < 0) return CUDA_ERROR_INVALID_CONTEXT;
  *device = d;
  return ToCu(StickyError(d));
}

int DeviceForReport() { return BoundContextDevice(); }

// ---- modules -----------------------------------------------------------------------------------

struct Module {
  std::vector<CubinKernel> kernels;  // names and resources, from the image
  bool loaded = true;
};
std::mutex g_modules_mu;
std::vector<std::unique_ptr<Module>>& Modules() {
  static auto* all = new std::vector<std::unique_ptr<Module>>;  // handles stay valid until exit
  return *all;
}
Module* AsModule(CUmodule m) {
  std::lock_guard<std::mutex> lock(g_modules_mu);
  for (auto& p : Modules()) {
    if (reinterpret_cast<CUmodule>(p.get()) == m) return p->loaded ? p.get() : nullptr;
  }
  return nullptr;
}

CUresult LoadModule(CUmodule* module, const void* image) {
  if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
  int dev;
  if (CUresult r = CurrentContext(&dev)) return r;
  auto m = std::make_unique<Module>();
  switch (ReadModuleKernels(image, SIZE_MAX, &m->kernels)) {
    case ImageStatus::kOk: break;
    case ImageStatus::kNotSupported:
      std::fprintf(stderr, "simgpu: cuModuleLoadData: PTX images are not modelled (give a cubin)\n");
      return CUDA_ERROR_NOT_SUPPORTED;
    case ImageStatus::kInvalidImage: return CUDA_ERROR_INVALID_IMAGE;
  }
  std::lock_guard<std::mutex> lock(g_modules_mu);
  Modules().push_back(std::move(m));
  *module = reinterpret_cast<CUmodule>(Modules().back().get());
  return CUDA_SUCCESS;
}

// ---- launches ----------------------------------------------------------------------------------

CUresult Launch(DriverCall& call, const KernelInfo* k, dim3 grid, dim3 block, unsigned shared_mem,
                CUstream stream, bool per_thread) {
  int dev;
  if (CUresult r = CurrentContext(&dev)) return r;
  if (k == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  uint64_t threads = static_cast<uint64_t>(block.x) * block.y * block.z;
  if (threads == 0 || threads > 1024 || block.x > 1024 || block.y > 1024 || block.z > 64 ||
      grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > 2147483647u || grid.y > 65535 ||
      grid.z > 65535 || shared_mem > MaxDynamicSharedBytes(k)) {  // see kernels.cc
    return CUDA_ERROR_INVALID_VALUE;
  }
  Stream* s = ResolveStream(dev, reinterpret_cast<cudaStream_t>(stream), per_thread);
  if (s == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  return ToCu(SubmitKernel(s, LaunchArgs{k, grid, block, shared_mem}, call.correlation_id()));
}

CUresult LaunchEx(DriverCall& call, const CUlaunchConfig* config, const KernelInfo* k,
                  bool per_thread) {
  if (config == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (config->numAttrs > 0 && config->attrs == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return Launch(call, k, dim3(config->gridDimX, config->gridDimY, config->gridDimZ),
                dim3(config->blockDimX, config->blockDimY, config->blockDimZ),
                config->sharedMemBytes, config->hStream, per_thread);
}

const char* KernelName(const void* f) {
  const KernelInfo* k = FindKernel(f);
  return k ? k->name.c_str() : nullptr;
}

// ---- copies and memsets --------------------------------------------------------------------------

CUresult Copy(DriverCall& call, void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
              bool async, CUstream stream, bool per_thread) {
  int dev;
  if (CUresult r = CurrentContext(&dev)) return r;
  // Synchronous copies run on the (legacy or per-thread) default stream.
  Stream* s = ResolveStream(dev, async ? reinterpret_cast<cudaStream_t>(stream) : nullptr,
                            per_thread);
  if (s == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  bool wait = false;
  std::shared_ptr<OpHandle> op;
  CopyArgs a{dst, src, bytes, 1, 0, 0, kind, async};
  cudaError_t e = SubmitCopy(s, a, call.correlation_id(), &wait, &op);
  if (e == cudaSuccess && wait) e = WaitOp(op);
  return ToCu(e);
}

// cuMemsetD8/D16/D32: `count` elements of `element_size` bytes set to `value`. simgpu moves
// bytes with a byte memset, so a 16/32-bit pattern must repeat one byte (0, 0xFFFFFFFF, ...).
CUresult Memset(DriverCall& call, CUdeviceptr dst, unsigned value, size_t count,
                unsigned element_size, bool async, CUstream stream, bool per_thread) {
  int dev;
  if (CUresult r = CurrentContext(&dev)) return r;
  unsigned byte = value & 0xFFu;
  for (unsigned i = 1; i < element_size; ++i) {
    if (((value >> (8 * i)) & 0xFFu) != byte) {
      std::fprintf(stderr, "simgpu: cuMemsetD%u with a pattern of unequal bytes is not modelled\n",
                   element_size * 8);
      return CUDA_ERROR_NOT_SUPPORTED;
    }
  }
  Stream* s = ResolveStream(dev, async ? reinterpret_cast<cudaStream_t>(stream) : nullptr,
                            per_thread);
  if (s == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  bool wait = false;
  std::shared_ptr<OpHandle> op;
  cudaError_t e = SubmitMemset(s, reinterpret_cast<void*>(dst), static_cast<int>(byte),
                               count * element_size, 1, 0, async, call.correlation_id(), &wait,
                               &op);
  if (e == cudaSuccess && wait) e = WaitOp(op);
  return ToCu(e);
}

// ---- streams and events --------------------------------------------------------------------------

CUresult StreamSync(DriverCall& call, CUstream stream, bool per_thread) {
  int dev;
  if (CUresult r = CurrentContext(&dev)) return r;
  Stream* s = ResolveStream(dev, reinterpret_cast<cudaStream_t>(stream), per_thread);
  if (s == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  uint64_t start = NowNs();
  cudaError_t e = SynchronizeStream(s);
  RecordSync(3 /* STREAM_SYNCHRONIZE */, StreamDevice(s), s, nullptr, start, NowNs(),
             call.correlation_id());
  return ToCu(e);
}

CUresult StreamQueryImpl(CUstream stream, bool per_thread) {
  int dev;
  if (CUresult r = CurrentContext(&dev)) return r;
  Stream* s = ResolveStream(dev, reinterpret_cast<cudaStream_t>(stream), per_thread);
  if (s == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  return StreamIdle(s) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult StreamWait(DriverCall& call, CUstream stream, CUevent event, bool per_thread) {
  int dev;
  if (CUresult r = CurrentContext(&dev)) return r;
  Stream* s = ResolveStream(dev, reinterpret_cast<cudaStream_t>(stream), per_thread);
  auto* e = reinterpret_cast<Event*>(event);
  if (s == nullptr || !IsEvent(e)) return CUDA_ERROR_INVALID_HANDLE;
  uint64_t now = NowNs();
  cudaError_t r = StreamWaitEvent(s, e);
  RecordSync(2 /* STREAM_WAIT_EVENT */, StreamDevice(s), s, e, now, NowNs(), call.correlation_id());
  return ToCu(r);
}

CUresult Record(DriverCall& call, CUevent event, CUstream stream, bool per_thread) {
  int dev;
  if (CUresult r = CurrentContext(&dev)) return r;
  auto* e = reinterpret_cast<Event*>(event);
  Stream* s = ResolveStream(dev, reinterpret_cast<cudaStream_t>(stream), per_thread);
  if (s == nullptr || !IsEvent(e)) return CUDA_ERROR_INVALID_HANDLE;
  return ToCu(RecordEvent(e, s, call.correlation_id()));
}

}  // namespace
}  // namespace simgpu

using simgpu::ToCu;

// Declares the params struct and the DriverCall for `tag` (e.g. cuMemAlloc_v2); returns
// CUDA_ERROR_NOT_INITIALIZED, unreported, before cuInit (or the runtime) initialised the driver.
#define SG_DRV_NAMED(symbol, tag, ...)                                                         \
  tag##_params sg_params{__VA_ARGS__};                                                        \
  if (!simgpu::DriverInitialized()) return CUDA_ERROR_NOT_INITIALIZED;                        \
  DriverCall call(CUPTI_DRIVER_TRACE_CBID_##tag, #tag, &sg_params, simgpu::DeviceForReport(), \
                  symbol)
#define SG_DRV(tag, ...) SG_DRV_NAMED(nullptr, tag, __VA_ARGS__)
// For driver functions whose params struct is not in generated_cuda_meta.h (no arguments).
#define SG_DRV0(tag)                                                                           \
  if (!simgpu::DriverInitialized()) return CUDA_ERROR_NOT_INITIALIZED;                        \
  DriverCall call(CUPTI_DRIVER_TRACE_CBID_##tag, #tag, nullptr, simgpu::DeviceForReport())
#define SG_RET(x) return static_cast<CUresult>(call.Finish((x)))

extern "C" {

// ---- initialisation, versions, devices -------------------------------------------------------------

CUresult CUDAAPI cuInit(unsigned int Flags) {
  // Initialisation (and CUDA_INJECTION64_PATH) happens before the call is reported.
  cudaError_t e = simgpu::EnsureInitialized();
  if (e != cudaSuccess) return ToCu(e);
  SG_DRV(cuInit, Flags);
  if (Flags != 0) SG_RET(CUDA_ERROR_INVALID_VALUE);
  SG_RET(simgpu::DeviceCount() == 0 ? CUDA_ERROR_NO_DEVICE : CUDA_SUCCESS);
}

CUresult CUDAAPI cuDriverGetVersion(int* driverVersion) {
  // Needs no initialisation (as documented); reported only once the driver is up.
  if (!simgpu::DriverInitialized()) {
    if (driverVersion == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = CUDA_VERSION;
    return CUDA_SUCCESS;
  }
  SG_DRV(cuDriverGetVersion, driverVersion);
  if (driverVersion == nullptr) SG_RET(CUDA_ERROR_INVALID_VALUE);
  *driverVersion = CUDA_VERSION;  // 13000, as simgpu's cudaDriverGetVersion
  SG_RET(CUDA_SUCCESS);
}

CUresult CUDAAPI cuDeviceGetCount(int* count) {
  SG_DRV(cuDeviceGetCount, count);
  if (count == nullptr) SG_RET(CUDA_ERROR_INVALID_VALUE);
  *count = simgpu::DeviceCount();
  SG_RET(CUDA_SUCCESS);
}

CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
  SG_DRV(cuDeviceGet, device, ordinal);
  if (device == nullptr) SG_RET(CUDA_ERROR_INVALID_VALUE);
  if (ordinal < 0 || ordinal >= simgpu::DeviceCount()) SG_RET(CUDA_ERROR_INVALID_DEVICE);
  *device = ordinal;
  SG_RET(CUDA_SUCCESS);
}

CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice dev) {
  SG_DRV(cuDeviceGetName, name, len, dev);
  if (name == nullptr || len <= 0) SG_RET(CUDA_ERROR_INVALID_VALUE);
  if (dev < 0 || dev >= simgpu::DeviceCount()) SG_RET(CUDA_ERROR_INVALID_DEVICE);
  std::snprintf(name, static_cast<size_t>(len), "simgpu simulated GPU %d", dev);
  SG_RET(CUDA_SUCCESS);
}

CUresult CUDAAPI cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  SG_DRV(cuDeviceTotalMem_v2, bytes, dev);
  if (bytes == nullptr) SG_RET(CUDA_ERROR_INVALID_VALUE);
  if (dev < 0 || dev >= simgpu::DeviceCount()) SG_RET(CUDA_ERROR_INVALID_DEVICE);
  size_t free_bytes = 0;
  simgpu::MemInfo(dev, &free_bytes, bytes);
  SG_RET(CUDA_SUCCESS);
}

CUresult CUDAAPI cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
  SG_DRV(cuDeviceGetAttribute, pi, attrib, dev);
  if (pi == nullptr) SG_RET(CUDA_ERROR_INVALID_VALUE);
  if (dev < 0 || dev >= simgpu::DeviceCount()) SG_RET(CUDA_ERROR_INVALID_DEVICE);
  // CUdevice_attribute values are cudaDeviceAttr's; unmodelled ones read as 0, as in the runtime.
  if (!simgpu::DeviceAttribute(static_cast<int>(attrib), dev, pi)) *pi = 0;
  SG_RET(CUDA_SUCCESS);
}

// ---- contexts ----------------------------------------------------------------------------------------

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  SG_DRV(cuDevicePrimaryCtxRetain, pctx, dev);
  if (pctx == nullptr) SG_RET(CUDA_ERROR_INVALID_VALUE);
  if (dev < 0 || dev >= simgpu::DeviceCount()) SG_RET(CUDA_ERROR_INVALID_DEVICE);
  *pctx = static_cast<CUcontext>(simgpu::ContextHandle(dev));
  SG_RET(CUDA_SUCCESS);
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  SG_DRV(cuDevicePrimaryCtxRelease_v2, dev);
  if (dev < 0 || dev >= simgpu::DeviceCount()) SG_RET(CUDA_ERROR_INVALID_DEVICE);
  SG_RET(CUDA_SUCCESS);  // the primary context lives until exit (simgpu never destroys it)
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext* pctx) {
  SG_DRV(cuCtxGetCurrent, pctx);
  if (pctx == nullptr) SG_RET(CUDA_ERROR_INVALID_VALUE);
  int d = simgpu::BoundContextDevice();
  *pctx = d < 0 ? nullptr : static_cast<CUcontext>(simgpu::ContextHandle(d));
  SG_RET(CUDA_SUCCESS);
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
  SG_DRV(cuCtxSetCurrent, ctx);
  if (ctx == nullptr) {
    simgpu::BindContext(-1);
    SG_RET(CUDA_SUCCESS);
  }
  int d = simgpu::DeviceOfContext(ctx);
  if (d < 0) SG_RET(CUDA_ERROR_INVALID_CONTEXT);
  simgpu::BindContext(d);
  call.set_device(d);
  SG_RET(CUDA_SUCCESS);
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) {
  SG_DRV(cuCtxGetDevice, device);
  if (device == nullptr) SG_RET(CUDA_ERROR_INVALID_VALUE);
  int d = simgpu::BoundContextDevice();
  if (d < 0) SG_RET(CUDA_ERROR_INVALID_CONTEXT);
  *device = d;
  SG_RET(CUDA_SUCCESS);
}

CUresult CUDAAPI cuCtxSynchronize(void) {
  SG_DRV0(cuCtxSynchronize);
  int dev;
  if (CUresult r = simgpu::CurrentContext(&dev); r != CUDA_SUCCESS) SG_RET(r);
  uint64_t start = simgpu::NowNs();
  cudaError_t e = simgpu::SynchronizeDevice(dev);
  simgpu::RecordSync(4 /* CONTEXT_SYNCHRONIZE */, dev, nullptr, nullptr, start, simgpu::NowNs(),
                     call.correlation_id());
  SG_RET(ToCu(e));
}

// ---- modules and functions ---------------------------------------------------------------------------

CUresult CUDAAPI cuModuleLoadData(CUmodule* module, const void* image) {
  SG_DRV(cuModuleLoadData, module, image);
  SG_RET(simgpu::LoadModule(module, image));
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int numOptions,
                                    CUjit_option* options, void** optionValues) {
  SG_DRV(cuModuleLoadDataEx, module, image, numOptions, options, optionValues);
  if (numOptions > 0 && (options == nullptr || optionValues == nullptr)) {
    SG_RET(CUDA_ERROR_INVALID_VALUE);
  }
  SG_RET(simgpu::LoadModule(module, image));  // JIT options change nothing for a cubin
}

CUresult CUDAAPI cuModuleUnload(CUmodule hmod) {
  SG_DRV(cuModuleUnload, hmod);
  simgpu::Module* m = simgpu::AsModule(hmod);
  if (m == nullptr) SG_RET(CUDA_ERROR_INVALID_HANDLE);
  std::lock_guard<std::mutex> lock(simgpu::g_modules_mu);
  m->loaded = false;  // its functions stay launchable in simgpu; the module handle is dead
  SG_RET(CUDA_SUCCESS);
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name) {
  SG_DRV(cuModuleGetFunction, hfunc, hmod, name);
  if (hfunc == nullptr || name == nullptr) SG_RET(CUDA_ERROR_INVALID_VALUE);
  simgpu::Module* m = simgpu::AsModule(hmod);
  if (m == nullptr) SG_RET(CUDA_ERROR_INVALID_HANDLE);
  const simgpu::CubinKernel* found = nullptr;
  for (const simgpu::CubinKernel& k : m->kernels) {
    if (k.name == name) found = &k;
  }
  if (found == nullptr) SG_RET(CUDA_ERROR_NOT_FOUND);
  // What the cubin says the kernel needs; registers the image does not give keep the default.
  simgpu::KernelResources resources;
  if (found->registers_per_thread > 0) {
    resources.registers_per_thread = static_cast<uint32_t>(found->registers_per_thread);
  }
  resources.static_shared_bytes = found->static_shared_bytes;
  *hfunc = reinterpret_cast<CUfunction>(
      const_cast<simgpu::KernelInfo*>(simgpu::ModuleKernel(m, name, &resources)));
  SG_RET(CUDA_SUCCESS);
}

CUresult CUDAAPI cuFuncGetAttribute(int* pi, CUfunction_attribute attrib, CUfunction hfunc) {
  SG_DRV(cuFuncGetAttribute, pi, attrib, hfunc);
  if (pi == nullptr) SG_RET(CUDA_ERROR_INVALID_VALUE);
  const simgpu::KernelInfo* k = simgpu::FindKernel(hfunc);
  if (k == nullptr) SG_RET(CUDA_ERROR_INVALID_HANDLE);
  switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
      *pi = static_cast<int>(k->static_shared_bytes.load(std::memory_order_relaxed));
      break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS:
      *pi = static_cast<int>(k->registers_per_thread.load(std::memory_order_relaxed));
      break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: *pi = 90; break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = 90; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
      *pi = static_cast<int>(simgpu::MaxDynamicSharedBytes(k));
      break;
    default: *pi = 0; break;  // const/local sizes, cache mode, cluster attributes
  }
  SG_RET(CUDA_SUCCESS);
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value) {
  SG_DRV(cuFuncSetAttribute, hfunc, attrib, value);
  const simgpu::KernelInfo* k = simgpu::FindKernel(hfunc);
  if (k == nullptr) SG_RET(CUDA_ERROR_INVALID_HANDLE);
  if (attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    SG_RET(simgpu::ToCu(simgpu::SetMaxDynamicSharedBytes(k, value)));
  }
  SG_RET(CUDA_SUCCESS);
}

CUresult CUDAAPI cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config) {
  SG_DRV(cuFuncSetCacheConfig, hfunc, config);
  if (simgpu::FindKernel(hfunc) == nullptr) SG_RET(CUDA_ERROR_INVALID_HANDLE);
  SG_RET(CUDA_SUCCESS);
}

// ---- launches ------------------------------------------------------------------------------------------

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                unsigned int gridDimZ, unsigned int blockDimX,
                                unsigned int blockDimY, unsigned int blockDimZ,
                                unsigned int sharedMemBytes, CUstream hStream,
                                void** kernelParams, void** extra) {
  SG_DRV_NAMED(simgpu::KernelName(f), cuLaunchKernel, f, gridDimX, gridDimY, gridDimZ, blockDimX,
               blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams, extra);
  SG_RET(simgpu::Launch(call, simgpu::FindKernel(f), dim3(gridDimX, gridDimY, gridDimZ),
                        dim3(blockDimX, blockDimY, blockDimZ), sharedMemBytes, hStream, false));
}

CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                     unsigned int gridDimZ, unsigned int blockDimX,
                                     unsigned int blockDimY, unsigned int blockDimZ,
                                     unsigned int sharedMemBytes, CUstream hStream,
                                     void** kernelParams, void** extra) {
  SG_DRV_NAMED(simgpu::KernelName(f), cuLaunchKernel_ptsz, f, gridDimX, gridDimY, gridDimZ,
               blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams, extra);
  SG_RET(simgpu::Launch(call, simgpu::FindKernel(f), dim3(gridDimX, gridDimY, gridDimZ),
                        dim3(blockDimX, blockDimY, blockDimZ), sharedMemBytes, hStream, true));
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** kernelParams,
                                  void** extra) {
  SG_DRV_NAMED(simgpu::KernelName(f), cuLaunchKernelEx, config, f, kernelParams, extra);
  SG_RET(simgpu::LaunchEx(call, config, simgpu::FindKernel(f), false));
}

CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction f,
                                       void** kernelParams, void** extra) {
  SG_DRV_NAMED(simgpu::KernelName(f), cuLaunchKernelEx_ptsz, config, f, kernelParams, extra);
  SG_RET(simgpu::LaunchEx(call, config, simgpu::FindKernel(f), true));
}

// ---- memory ----------------------------------------------------------------------------------------------

CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  SG_DRV(cuMemAlloc_v2, dptr, bytesize);
  int dev;
  if (CUresult r = simgpu::CurrentContext(&dev); r != CUDA_SUCCESS) SG_RET(r);
  if (dptr == nullptr || bytesize == 0) SG_RET(CUDA_ERROR_INVALID_VALUE);
  simgpu::PayHostCost(simgpu::GetConfig().malloc_host_ns);
  void* p = nullptr;
  cudaError_t e = simgpu::DeviceMalloc(dev, bytesize, false, false, call.correlation_id(), &p);
  if (e == cudaSuccess) {
    simgpu::DeviceBarrier(dev);  // implicit synchronisation, as cudaMalloc
    *dptr = reinterpret_cast<CUdeviceptr>(p);
  }
  SG_RET(ToCu(e));
}

CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr) {
  SG_DRV(cuMemFree_v2, dptr);
  int dev;
  if (CUresult r = simgpu::CurrentContext(&dev); r != CUDA_SUCCESS) SG_RET(r);
  if (dptr == 0) SG_RET(CUDA_SUCCESS);
  void* p = reinterpret_cast<void*>(dptr);
  simgpu::PointerInfo info = simgpu::ClassifyPointer(p);
  if (info.base != dptr ||
      (info.kind != simgpu::MemKind::kDevice && info.kind != simgpu::MemKind::kManaged)) {
    SG_RET(CUDA_ERROR_INVALID_VALUE);
  }
  cudaError_t e = simgpu::SynchronizeDevice(info.device);  // as cudaFree
  simgpu::PayHostCost(simgpu::GetConfig().free_host_ns);
  cudaError_t f = simgpu::DeviceFree(p, call.correlation_id());
  SG_RET(ToCu(e != cudaSuccess ? e : f));
}

// ---- virtual memory management: PyTorch's expandable segments (driver.h, "Virtual memory
// management"). Costs: cuMemCreate what cudaMalloc costs (the backing allocation), cuMemRelease
// what cudaFree costs, the rest an ordinary call's; no implicit synchronisation. ----------------

CUresult CUDAAPI cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                              CUmemAllocationGranularity_flags option) {
  SG_DRV(cuMemGetAllocationGranularity, granularity, prop, option);
  if (granularity == nullptr || prop == nullptr || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
      prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
    SG_RET(CUDA_ERROR_INVALID_VALUE);
  *granularity = simgpu::kVmmGranularity;  // minimum and recommended alike
  SG_RET(CUDA_SUCCESS);
}

CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                     unsigned long long flags) {
  SG_DRV(cuMemAddressReserve, ptr, size, alignment, addr, flags);
  if (ptr == nullptr || flags != 0) SG_RET(CUDA_ERROR_INVALID_VALUE);
  simgpu::PayHostCost(simgpu::GetConfig().api_host_ns);
  uintptr_t base = 0;  // `addr` is a hint: not honoured (allowed)
  const int r = simgpu::VmmReserve(size, alignment, &base);
  if (r == 0) *ptr = static_cast<CUdeviceptr>(base);
  SG_RET(static_cast<CUresult>(r));
}

CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  SG_DRV(cuMemAddressFree, ptr, size);
  SG_RET(static_cast<CUresult>(simgpu::VmmFree(static_cast<uintptr_t>(ptr), size)));
}

CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size, const CUmemAllocationProp* prop,
                             unsigned long long flags) {
  SG_DRV(cuMemCreate, handle, size, prop, flags);
  if (handle == nullptr || prop == nullptr || flags != 0 || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
      prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE || prop->location.id < 0 ||
      prop->location.id >= simgpu::DeviceCount())
    SG_RET(CUDA_ERROR_INVALID_VALUE);
  simgpu::PayHostCost(simgpu::GetConfig().malloc_host_ns);
  uint64_t h = 0;
  const int r = simgpu::VmmCreate(prop->location.id, size, &h);
  if (r == 0) *handle = static_cast<CUmemGenericAllocationHandle>(h);
  SG_RET(static_cast<CUresult>(r));
}

CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle) {
  SG_DRV(cuMemRelease, handle);
  simgpu::PayHostCost(simgpu::GetConfig().free_host_ns);
  SG_RET(static_cast<CUresult>(simgpu::VmmRelease(static_cast<uint64_t>(handle))));
}

CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                          unsigned long long flags) {
  SG_DRV(cuMemMap, ptr, size, offset, handle, flags);
  if (flags != 0) SG_RET(CUDA_ERROR_INVALID_VALUE);
  simgpu::PayHostCost(simgpu::GetConfig().api_host_ns);
  SG_RET(static_cast<CUresult>(
      simgpu::VmmMap(static_cast<uintptr_t>(ptr), size, offset, static_cast<uint64_t>(handle))));
}

CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size) {
  SG_DRV(cuMemUnmap, ptr, size);
  simgpu::PayHostCost(simgpu::GetConfig().api_host_ns);
  SG_RET(static_cast<CUresult>(simgpu::VmmUnmap(static_cast<uintptr_t>(ptr), size)));
}

CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count) {
  SG_DRV(cuMemSetAccess, ptr, size, desc, count);
  if (desc == nullptr || count == 0) SG_RET(CUDA_ERROR_INVALID_VALUE);
  for (size_t i = 0; i < count; ++i) {
    if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || desc[i].location.id < 0 ||
        desc[i].location.id >= simgpu::DeviceCount())
      SG_RET(CUDA_ERROR_INVALID_VALUE);
  }
  simgpu::PayHostCost(simgpu::GetConfig().api_host_ns);
  SG_RET(static_cast<CUresult>(simgpu::VmmCheckMapped(static_cast<uintptr_t>(ptr), size)));
}

// Triton's launcher checks every pointer argument with CU_POINTER_ATTRIBUTE_DEVICE_POINTER.
// Memory CUDA does not know (pageable host memory): CUDA_ERROR_INVALID_VALUE, as documented.
// simgpu reports managed memory as CU_MEMORYTYPE_DEVICE.
CUresult CUDAAPI cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
  SG_DRV(cuPointerGetAttribute, data, attribute, ptr);
  if (data == nullptr) SG_RET(CUDA_ERROR_INVALID_VALUE);
  simgpu::PointerInfo info = simgpu::ClassifyPointer(reinterpret_cast<const void*>(ptr));
  if (info.kind == simgpu::MemKind::kPageable) SG_RET(CUDA_ERROR_INVALID_VALUE);
  bool on_device = info.kind == simgpu::MemKind::kDevice || info.kind == simgpu::MemKind::kManaged;
  int device = info.device >= 0 ? info.device : 0;
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
      *static_cast<CUcontext*>(data) = static_cast<CUcontext>(simgpu::ContextHandle(device));
      break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      *static_cast<unsigned*>(data) = on_device ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
      break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:  // unified addressing: the same address
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      if (attribute == CU_POINTER_ATTRIBUTE_HOST_POINTER && info.kind == simgpu::MemKind::kDevice) {
        SG_RET(CUDA_ERROR_INVALID_VALUE);  // device memory has no host mapping
      }
      *static_cast<CUdeviceptr*>(data) = ptr;
      break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
      *static_cast<unsigned*>(data) = info.kind == simgpu::MemKind::kManaged;
      break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      *static_cast<int*>(data) = device;
      break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
      *static_cast<CUdeviceptr*>(data) = info.base;
      break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
      *static_cast<size_t*>(data) = info.size;
      break;
    default:
      SG_RET(CUDA_ERROR_NOT_SUPPORTED);
  }
  SG_RET(CUDA_SUCCESS);
}

CUresult CUDAAPI cuMemGetInfo_v2(size_t* free, size_t* total) {
  SG_DRV(cuMemGetInfo_v2, free, total);
  int dev;
  if (CUresult r = simgpu::CurrentContext(&dev); r != CUDA_SUCCESS) SG_RET(r);
  if (free == nullptr || total == nullptr) SG_RET(CUDA_ERROR_INVALID_VALUE);
  simgpu::MemInfo(dev, free, total);
  SG_RET(CUDA_SUCCESS);
}

static CUresult HostAlloc(DriverCall& call, void** pp, size_t bytesize) {
  int dev;
  if (CUresult r = simgpu::CurrentContext(&dev); r != CUDA_SUCCESS) return r;
  if (pp == nullptr) return CUDA_ERROR_INVALID_VALUE;
  simgpu::PayHostCost(simgpu::GetConfig().host_alloc_host_ns);
  cudaError_t e = simgpu::HostAllocPinned(bytesize, call.correlation_id(), pp);
  if (e == cudaSuccess) simgpu::DeviceBarrier(dev);
  return ToCu(e);
}

CUresult CUDAAPI cuMemAllocHost_v2(void** pp, size_t bytesize) {
  SG_DRV(cuMemAllocHost_v2, pp, bytesize);
  SG_RET(HostAlloc(call, pp, bytesize));
}

CUresult CUDAAPI cuMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags) {
  SG_DRV(cuMemHostAlloc, pp, bytesize, Flags);
  SG_RET(HostAlloc(call, pp, bytesize));
}

CUresult CUDAAPI cuMemFreeHost(void* p) {
  SG_DRV(cuMemFreeHost, p);
  int dev;
  if (CUresult r = simgpu::CurrentContext(&dev); r != CUDA_SUCCESS) SG_RET(r);
  simgpu::PointerInfo info = simgpu::ClassifyPointer(p);
  if (p == nullptr || info.kind != simgpu::MemKind::kPinned || info.registered ||
      info.base != reinterpret_cast<uintptr_t>(p)) {
    SG_RET(CUDA_ERROR_INVALID_VALUE);
  }
  simgpu::SynchronizeAllDevices();  // as cudaFreeHost
  simgpu::PayHostCost(simgpu::GetConfig().free_host_ns);
  SG_RET(ToCu(simgpu::HostFreePinned(p, call.correlation_id())));
}

// Synchronous copies (legacy default stream; _ptds: the thread's default stream).
#define SG_SYNC_COPY(name, tag, dst_t, src_t, kind, per_thread)                              \
  CUresult CUDAAPI name(dst_t dst, src_t src, size_t ByteCount) {                             \
    SG_DRV(tag, dst, src, ByteCount);                                                         \
    SG_RET(simgpu::Copy(call, (void*)(dst), (const void*)(src), ByteCount, kind, false,       \
                        nullptr, per_thread));                                                \
  }
SG_SYNC_COPY(cuMemcpyHtoD_v2, cuMemcpyHtoD_v2, CUdeviceptr, const void*, cudaMemcpyHostToDevice, false)
SG_SYNC_COPY(cuMemcpyHtoD_v2_ptds, cuMemcpyHtoD_v2_ptds, CUdeviceptr, const void*, cudaMemcpyHostToDevice, true)
SG_SYNC_COPY(cuMemcpyDtoH_v2, cuMemcpyDtoH_v2, void*, CUdeviceptr, cudaMemcpyDeviceToHost, false)
SG_SYNC_COPY(cuMemcpyDtoH_v2_ptds, cuMemcpyDtoH_v2_ptds, void*, CUdeviceptr, cudaMemcpyDeviceToHost, true)
SG_SYNC_COPY(cuMemcpyDtoD_v2, cuMemcpyDtoD_v2, CUdeviceptr, CUdeviceptr, cudaMemcpyDeviceToDevice, false)
SG_SYNC_COPY(cuMemcpyDtoD_v2_ptds, cuMemcpyDtoD_v2_ptds, CUdeviceptr, CUdeviceptr, cudaMemcpyDeviceToDevice, true)
SG_SYNC_COPY(cuMemcpy, cuMemcpy, CUdeviceptr, CUdeviceptr, cudaMemcpyDefault, false)
SG_SYNC_COPY(cuMemcpy_ptds, cuMemcpy_ptds, CUdeviceptr, CUdeviceptr, cudaMemcpyDefault, true)
#undef SG_SYNC_COPY

// Asynchronous copies on hStream.
#define SG_ASYNC_COPY(name, tag, dst_t, src_t, kind, per_thread)                             \
  CUresult CUDAAPI name(dst_t dst, src_t src, size_t ByteCount, CUstream hStream) {           \
    SG_DRV(tag, dst, src, ByteCount, hStream);                                                \
    SG_RET(simgpu::Copy(call, (void*)(dst), (const void*)(src), ByteCount, kind, true,        \
                        hStream, per_thread));                                                \
  }
SG_ASYNC_COPY(cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2, CUdeviceptr, const void*, cudaMemcpyHostToDevice, false)
SG_ASYNC_COPY(cuMemcpyHtoDAsync_v2_ptsz, cuMemcpyHtoDAsync_v2_ptsz, CUdeviceptr, const void*, cudaMemcpyHostToDevice, true)
SG_ASYNC_COPY(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2, void*, CUdeviceptr, cudaMemcpyDeviceToHost, false)
SG_ASYNC_COPY(cuMemcpyDtoHAsync_v2_ptsz, cuMemcpyDtoHAsync_v2_ptsz, void*, CUdeviceptr, cudaMemcpyDeviceToHost, true)
SG_ASYNC_COPY(cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2, CUdeviceptr, CUdeviceptr, cudaMemcpyDeviceToDevice, false)
SG_ASYNC_COPY(cuMemcpyDtoDAsync_v2_ptsz, cuMemcpyDtoDAsync_v2_ptsz, CUdeviceptr, CUdeviceptr, cudaMemcpyDeviceToDevice, true)
SG_ASYNC_COPY(cuMemcpyAsync, cuMemcpyAsync, CUdeviceptr, CUdeviceptr, cudaMemcpyDefault, false)
SG_ASYNC_COPY(cuMemcpyAsync_ptsz, cuMemcpyAsync_ptsz, CUdeviceptr, CUdeviceptr, cudaMemcpyDefault, true)
#undef SG_ASYNC_COPY

#define SG_SYNC_MEMSET(name, tag, value_t, bytes, per_thread)                                 \
  CUresult CUDAAPI name(CUdeviceptr dstDevice, value_t value, size_t N) {                      \
    SG_DRV(tag, dstDevice, value, N);                                                          \
    SG_RET(simgpu::Memset(call, dstDevice, value, N, bytes, false, nullptr, per_thread));     \
  }
SG_SYNC_MEMSET(cuMemsetD8_v2, cuMemsetD8_v2, unsigned char, 1, false)
SG_SYNC_MEMSET(cuMemsetD8_v2_ptds, cuMemsetD8_v2_ptds, unsigned char, 1, true)
SG_SYNC_MEMSET(cuMemsetD16_v2, cuMemsetD16_v2, unsigned short, 2, false)
SG_SYNC_MEMSET(cuMemsetD16_v2_ptds, cuMemsetD16_v2_ptds, unsigned short, 2, true)
SG_SYNC_MEMSET(cuMemsetD32_v2, cuMemsetD32_v2, unsigned int, 4, false)
SG_SYNC_MEMSET(cuMemsetD32_v2_ptds, cuMemsetD32_v2_ptds, unsigned int, 4, true)
#undef SG_SYNC_MEMSET

#define SG_ASYNC_MEMSET(name, tag, value_t, bytes, per_thread)                                \
  CUresult CUDAAPI name(CUdeviceptr dstDevice, value_t value, size_t N, CUstream hStream) {    \
    SG_DRV(tag, dstDevice, value, N, hStream);                                                 \
    SG_RET(simgpu::Memset(call, dstDevice, value, N, bytes, true, hStream, per_thread));      \
  }
SG_ASYNC_MEMSET(cuMemsetD8Async, cuMemsetD8Async, unsigned char, 1, false)
SG_ASYNC_MEMSET(cuMemsetD8Async_ptsz, cuMemsetD8Async_ptsz, unsigned char, 1, true)
SG_ASYNC_MEMSET(cuMemsetD16Async, cuMemsetD16Async, unsigned short, 2, false)
SG_ASYNC_MEMSET(cuMemsetD16Async_ptsz, cuMemsetD16Async_ptsz, unsigned short, 2, true)
SG_ASYNC_MEMSET(cuMemsetD32Async, cuMemsetD32Async, unsigned int, 4, false)
SG_ASYNC_MEMSET(cuMemsetD32Async_ptsz, cuMemsetD32Async_ptsz, unsigned int, 4, true)
#undef SG_ASYNC_MEMSET

// ---- streams -----------------------------------------------------------------------------------------

CUresult CUDAAPI cuStreamCreate(CUstream* phStream, unsigned int Flags) {
  SG_DRV(cuStreamCreate, phStream, Flags);
  int dev;
  if (CUresult r = simgpu::CurrentContext(&dev); r != CUDA_SUCCESS) SG_RET(r);
  if (phStream == nullptr || (Flags & ~CU_STREAM_NON_BLOCKING) != 0) {
    SG_RET(CUDA_ERROR_INVALID_VALUE);
  }
  simgpu::Stream* s = simgpu::CreateStream(dev, Flags, 0, call.correlation_id());
  *phStream = reinterpret_cast<CUstream>(simgpu::StreamHandle(s));
  SG_RET(CUDA_SUCCESS);
}

CUresult CUDAAPI cuStreamCreateWithPriority(CUstream* phStream, unsigned int flags, int priority) {
  SG_DRV(cuStreamCreateWithPriority, phStream, flags, priority);
  int dev;
  if (CUresult r = simgpu::CurrentContext(&dev); r != CUDA_SUCCESS) SG_RET(r);
  if (phStream == nullptr || (flags & ~CU_STREAM_NON_BLOCKING) != 0) {
    SG_RET(CUDA_ERROR_INVALID_VALUE);
  }
  // Priorities are clamped to the device's range [-5, 0] (greatest = -5), as documented.
  if (priority < -5) priority = -5;
  if (priority > 0) priority = 0;
  simgpu::Stream* s = simgpu::CreateStream(dev, flags, priority, call.correlation_id());
  *phStream = reinterpret_cast<CUstream>(simgpu::StreamHandle(s));
  SG_RET(CUDA_SUCCESS);
}

CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream) {
  SG_DRV(cuStreamDestroy_v2, hStream);
  int dev;
  if (CUresult r = simgpu::CurrentContext(&dev); r != CUDA_SUCCESS) SG_RET(r);
  if (hStream == nullptr || hStream == CU_STREAM_LEGACY || hStream == CU_STREAM_PER_THREAD) {
    SG_RET(CUDA_ERROR_INVALID_HANDLE);
  }
  simgpu::Stream* s = simgpu::ResolveStream(dev, reinterpret_cast<cudaStream_t>(hStream), false);
  if (s == nullptr) SG_RET(CUDA_ERROR_INVALID_HANDLE);
  simgpu::DestroyStream(s);
  SG_RET(CUDA_SUCCESS);
}

CUresult CUDAAPI cuStreamSynchronize(CUstream hStream) {
  SG_DRV(cuStreamSynchronize, hStream);
  SG_RET(simgpu::StreamSync(call, hStream, false));
}

CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream) {
  SG_DRV(cuStreamSynchronize_ptsz, hStream);
  SG_RET(simgpu::StreamSync(call, hStream, true));
}

CUresult CUDAAPI cuStreamQuery(CUstream hStream) {
  SG_DRV(cuStreamQuery, hStream);
  SG_RET(simgpu::StreamQueryImpl(hStream, false));
}

CUresult CUDAAPI cuStreamQuery_ptsz(CUstream hStream) {
  SG_DRV(cuStreamQuery_ptsz, hStream);
  SG_RET(simgpu::StreamQueryImpl(hStream, true));
}

CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  SG_DRV(cuStreamWaitEvent, hStream, hEvent, Flags);
  SG_RET(simgpu::StreamWait(call, hStream, hEvent, false));
}

CUresult CUDAAPI cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  SG_DRV(cuStreamWaitEvent_ptsz, hStream, hEvent, Flags);
  SG_RET(simgpu::StreamWait(call, hStream, hEvent, true));
}

// ---- events -------------------------------------------------------------------------------------------

CUresult CUDAAPI cuEventCreate(CUevent* phEvent, unsigned int Flags) {
  SG_DRV(cuEventCreate, phEvent, Flags);
  int dev;
  if (CUresult r = simgpu::CurrentContext(&dev); r != CUDA_SUCCESS) SG_RET(r);
  if (phEvent == nullptr) SG_RET(CUDA_ERROR_INVALID_VALUE);
  // CU_EVENT_* flags have cudaEvent*'s values (DEFAULT 0, BLOCKING_SYNC 1, DISABLE_TIMING 2, ...).
  *phEvent = reinterpret_cast<CUevent>(simgpu::CreateEvent(dev, Flags));
  SG_RET(CUDA_SUCCESS);
}

CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream) {
  SG_DRV(cuEventRecord, hEvent, hStream);
  SG_RET(simgpu::Record(call, hEvent, hStream, false));
}

CUresult CUDAAPI cuEventRecord_ptsz(CUevent hEvent, CUstream hStream) {
  SG_DRV(cuEventRecord_ptsz, hEvent, hStream);
  SG_RET(simgpu::Record(call, hEvent, hStream, true));
}

CUresult CUDAAPI cuEventQuery(CUevent hEvent) {
  SG_DRV(cuEventQuery, hEvent);
  auto* e = reinterpret_cast<simgpu::Event*>(hEvent);
  if (!simgpu::IsEvent(e)) SG_RET(CUDA_ERROR_INVALID_HANDLE);
  SG_RET(ToCu(simgpu::QueryEvent(e)));
}

CUresult CUDAAPI cuEventSynchronize(CUevent hEvent) {
  SG_DRV(cuEventSynchronize, hEvent);
  auto* e = reinterpret_cast<simgpu::Event*>(hEvent);
  if (!simgpu::IsEvent(e)) SG_RET(CUDA_ERROR_INVALID_HANDLE);
  uint64_t start = simgpu::NowNs();
  cudaError_t r = simgpu::SynchronizeEvent(e);
  int dev = simgpu::BoundContextDevice();
  simgpu::RecordSync(1 /* EVENT_SYNCHRONIZE */, dev < 0 ? 0 : dev, nullptr, e, start,
                     simgpu::NowNs(), call.correlation_id());
  SG_RET(ToCu(r));
}

CUresult CUDAAPI cuEventDestroy_v2(CUevent hEvent) {
  SG_DRV(cuEventDestroy_v2, hEvent);
  auto* e = reinterpret_cast<simgpu::Event*>(hEvent);
  if (!simgpu::IsEvent(e)) SG_RET(CUDA_ERROR_INVALID_HANDLE);
  simgpu::DestroyEvent(e);
  SG_RET(CUDA_SUCCESS);
}

CUresult CUDAAPI cuEventElapsedTime_v2(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  SG_DRV(cuEventElapsedTime_v2, pMilliseconds, hStart, hEnd);
  auto* s = reinterpret_cast<simgpu::Event*>(hStart);
  auto* e = reinterpret_cast<simgpu::Event*>(hEnd);
  if (pMilliseconds == nullptr) SG_RET(CUDA_ERROR_INVALID_VALUE);
  if (!simgpu::IsEvent(s) || !simgpu::IsEvent(e)) SG_RET(CUDA_ERROR_INVALID_HANDLE);
  SG_RET(ToCu(simgpu::EventElapsedMs(s, e, pMilliseconds)));
}

// The pre-13.0 entry point (cuda.h now maps cuEventElapsedTime to _v2); same semantics here.
CUresult CUDAAPI cuEventElapsedTime(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  SG_DRV(cuEventElapsedTime, pMilliseconds, hStart, hEnd);
  auto* s = reinterpret_cast<simgpu::Event*>(hStart);
  auto* e = reinterpret_cast<simgpu::Event*>(hEnd);
  if (pMilliseconds == nullptr) SG_RET(CUDA_ERROR_INVALID_VALUE);
  if (!simgpu::IsEvent(s) || !simgpu::IsEvent(e)) SG_RET(CUDA_ERROR_INVALID_HANDLE);
  SG_RET(ToCu(simgpu::EventElapsedMs(s, e, pMilliseconds)));
}

// ---- errors --------------------------------------------------------------------------------------------

CUresult CUDAAPI cuGetErrorName(CUresult error, const char** pStr) {
  if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pStr = simgpu::CuErrorName(error);
  return *pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char** pStr) {
  if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pStr = simgpu::CuErrorName(error);  // simgpu answers the enumerator's name for both
  return *pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

}  // extern "C"
