// api_scope.h — how simgpu's two API layers nest on a thread, and the driver-API call wrapper.
//
// simgpu has, like CUDA, a runtime (libcudart.so.13) on top of a driver (libcuda.so.1). Both
// report their calls to the tool hooks (tool_hooks.h), the runtime in CUPTI's RUNTIME_API domain,
// the driver in its DRIVER_API domain. The correlation-id rules (sources in
// tests/simgpu/CUPTI_CORRELATION.md):
//   - the outermost API call on a thread (a runtime call, or a driver call made by the program)
//     draws a fresh correlation id;
//   - a driver call made *inside* a runtime call (the runtime implementing itself) is reported
//     with the enclosing runtime call's correlation id, and draws none of its own;
//   - every device operation (kernel, memcpy, memset) carries the outermost call's id, so it
//     matches the runtime record and its nested driver record, or the driver record alone.
// The outermost call also names the operation's submitter in the truth log (`submit_api`,
// `submit_domain`).
//
// Thread safety: everything here is per calling thread.
#ifndef GPUSTALL_TESTS_SIMGPU_DRIVER_API_SCOPE_H_
#define GPUSTALL_TESTS_SIMGPU_DRIVER_API_SCOPE_H_

#include <cstdint>

#include "driver/driver.h"

namespace simgpu {

constexpr int kDomainDriver = 1;   // CUPTI_CB_DOMAIN_DRIVER_API
constexpr int kDomainRuntime = 2;  // CUPTI_CB_DOMAIN_RUNTIME_API

// The calling thread's outermost API call in progress.
struct ApiFrame {
  uint32_t correlation_id = 0;
  const char* name = nullptr;  // CUPTI function name, static storage
  int domain = 0;              // 0: no API call in progress
};
SIMGPU_DRIVER_API const ApiFrame& OutermostApi();
// The runtime's ApiCall brackets itself with these (only the outermost call is kept).
SIMGPU_DRIVER_API void PushApi(uint32_t correlation_id, const char* name, int domain);
SIMGPU_DRIVER_API void PopApi();

// The thread's current context, as the driver API sees it (cuCtxGetCurrent). A thread starts with
// none; cuCtxSetCurrent/cuCtxPushCurrent bind one, and the runtime binds its device's primary
// context when a runtime call uses the device (as cudart does). -1 = none.
SIMGPU_DRIVER_API int BoundContextDevice();
SIMGPU_DRIVER_API void BindContext(int device);
// True once the driver was initialised (cuInit, or the runtime's first call, which calls it).
SIMGPU_DRIVER_API bool DriverInitialized();

// One driver-API call: ENTER callback at construction, EXIT callback, API record (domain
// DRIVER_API) and truth `api` line at Finish. Nested inside a runtime call it takes that call's
// correlation id; otherwise it draws a fresh one and becomes the thread's outermost call.
class SIMGPU_DRIVER_API DriverCall {
 public:
  DriverCall(uint32_t cbid, const char* name, const void* params, int device,
             const char* symbol = nullptr);
  ~DriverCall();
  DriverCall(const DriverCall&) = delete;
  DriverCall& operator=(const DriverCall&) = delete;

  bool nested() const { return nested_; }
  uint32_t correlation_id() const { return corr_; }
  void set_device(int device) { device_ = device; }
  void set_symbol(const char* symbol) { symbol_ = symbol; }
  // Reports the exit with `result` (a CUresult) and returns it.
  int Finish(int result);

 private:
  uint32_t cbid_;
  const char* name_;
  const void* params_;
  const char* symbol_;
  int device_;
  uint32_t corr_ = 0;
  bool nested_ = false;
  bool finished_ = false;
  uint64_t start_ns_ = 0;
  uint64_t correlation_data_ = 0;
};

// The CUresult a driver call returns for the runtime's error `e`.
SIMGPU_DRIVER_API int CuResultOf(cudaError_t e);

// Writes the truth log's `api` line for one API call (runtime or driver), if SIMGPU_TRUTH_API.
SIMGPU_DRIVER_API void TruthApiLine(const char* name, uint32_t cbid, int domain, bool nested,
                                    uint64_t start_ns, uint64_t end_ns, uint32_t corr, int device,
                                    int result);

}  // namespace simgpu

#endif  // GPUSTALL_TESTS_SIMGPU_DRIVER_API_SCOPE_H_
