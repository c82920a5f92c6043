// api_call.cc — driver initialisation, tool hooks and last-error state around every runtime call.
#include "cudart/api_call.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <mutex>
#include <set>
#include <string>

#include "cudart/unsupported_stub.h"
#include "driver/api_scope.h"

namespace simgpu {
namespace {

thread_local cudaError_t t_last_error = cudaSuccess;

// The runtime maps the driver library when it initialises, as cudart does: the real
// libcudart.so.13 has no NEEDED entry for libcuda (`readelf -d`: libc, ld-linux, libdl,
// libpthread, librt) and names "libcuda.so.1" among its strings, which it dlopens; so a CUDA
// process has libcuda.so.1 mapped once it made a runtime call, and tools find it there (a
// profiler asking the driver for device attributes, agent/capture/cuda_device.h). simgpu's
// runtime links its driver core directly, so without this the library would never be mapped.
void MapDriverLibrary() {
  static const bool mapped = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL) != nullptr;
  (void)mapped;
}

}  // namespace

bool IsSticky(cudaError_t e) {
  // The errors that leave a real context unusable ("any further CUDA work will return the same
  // error"); simgpu raises only cudaErrorIllegalAddress, the rest are listed for completeness.
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
      return true;
    default:
      return false;
  }
}

cudaError_t& LastError() { return t_last_error; }

ApiCall::ApiCall(uint32_t cbid, const char* name, const void* params, Checks checks,
                 const char* symbol)
    : cbid_(cbid), name_(name), params_(params), symbol_(symbol) {
  if (checks != kNothing) {
    MapDriverLibrary();
    early_ = EnsureInitialized();
    if (early_ != cudaSuccess) return;  // no driver: nothing to report to
  }
  device_ = CurrentDevice();
  if (checks == kInitAndSticky) {
    early_ = DeviceCount() == 0 ? cudaErrorNoDevice : StickyError(device_);
  }
  // The runtime makes its device's primary context current on the thread (cuCtxGetCurrent sees
  // it afterwards), as cudart does on first use.
  if (checks != kNothing && DeviceCount() > 0 && BoundContextDevice() != device_) {
    BindContext(device_);
  }
  corr_ = simgpuDriverNextCorrelationId();
  // Driver calls the runtime makes inside this call report this correlation id (api_scope.h).
  PushApi(corr_, name_, kDomainRuntime);
  start_ns_ = NowNs();
  entered_ = true;
  if (const SimgpuToolHooks* h = CurrentHooks(); h && h->on_api) {
    SimgpuApiCallback cb{};
    cb.site = 0;  // CUPTI_API_ENTER
    cb.domain = 2;  // CUPTI_CB_DOMAIN_RUNTIME_API
    cb.cbid = cbid_;
    cb.function_name = name_;
    cb.function_params = params_;
    cb.symbol_name = symbol_;
    cb.context = ContextHandle(device_);
    cb.context_uid = ContextId(device_);
    cb.correlation_id = corr_;
    cb.correlation_data = &correlation_data_;
    h->on_api(&cb);
  }
}

cudaError_t ApiCall::Finish(cudaError_t result, bool set_last_error) {
  if (set_last_error && result != cudaSuccess) {
    // A sticky error stays the last error for good; others stay until cudaGetLastError.
    if (!IsSticky(t_last_error)) t_last_error = result;
  }
  if (!entered_) return result;
  entered_ = false;
  const SimgpuToolHooks* h = CurrentHooks();
  if (h && h->on_api) {
    SimgpuApiCallback cb{};
    cb.site = 1;  // CUPTI_API_EXIT
    cb.domain = 2;
    cb.cbid = cbid_;
    cb.function_name = name_;
    cb.function_params = params_;
    cb.function_return_value = &result;
    cb.symbol_name = symbol_;
    cb.context = ContextHandle(device_);
    cb.context_uid = ContextId(device_);
    cb.correlation_id = corr_;
    cb.correlation_data = &correlation_data_;
    h->on_api(&cb);
  }
  TruthApiLine(name_, cbid_, kDomainRuntime, false, start_ns_, NowNs(), corr_, device_,
               static_cast<int>(result));
  if (h && h->on_api_record) {
    SimgpuApiRecord rec{};
    rec.cbid = cbid_;
    rec.domain = 2;
    rec.start_ns = start_ns_;
    rec.end_ns = NowNs();
    rec.process_id = ProcessId();
    rec.thread_id = CurrentTid();
    rec.correlation_id = corr_;
    rec.return_value = static_cast<int32_t>(result);
    h->on_api_record(&rec);
  }
  PopApi();
  return result;
}

ApiCall::~ApiCall() {
  if (entered_) PopApi();  // left without Finish: keep the thread's nesting balanced
}

}  // namespace simgpu

extern "C" int sgUnsupported(const char* name) {
  static std::mutex mu;
  static std::set<std::string>* reported = new std::set<std::string>;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (reported->insert(name).second) {
      std::fprintf(stderr, "simgpu: %s is not modelled; returning cudaErrorNotSupported\n", name);
    }
  }
  if (!simgpu::IsSticky(simgpu::LastError())) simgpu::LastError() = cudaErrorNotSupported;
  return cudaErrorNotSupported;
}
