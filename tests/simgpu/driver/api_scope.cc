// api_scope.cc — API nesting per thread, the driver-API call wrapper (api_scope.h).
#include "driver/api_scope.h"

#include <unistd.h>

#include <cstdio>

#include "driver/internal.h"

namespace simgpu {
namespace {

thread_local ApiFrame t_outermost;
thread_local int t_depth = 0;
thread_local int t_bound_context = -1;

}  // namespace

const ApiFrame& OutermostApi() { return t_outermost; }

void PushApi(uint32_t correlation_id, const char* name, int domain) {
  if (t_depth++ == 0) t_outermost = ApiFrame{correlation_id, name, domain};
}

void PopApi() {
  if (t_depth > 0 && --t_depth == 0) t_outermost = ApiFrame{};
}

int CuResultOf(cudaError_t e) {
  // cuda.h's CUresult and driver_types.h's cudaError_t share the codes of the common errors
  // (1, 2, 3, 100, 101, 400, 600, 700, 702, 801); these differ.
  switch (e) {
    case cudaErrorInvalidConfiguration: return 1;     // CUDA_ERROR_INVALID_VALUE
    case cudaErrorInvalidPitchValue: return 1;
    case cudaErrorInvalidMemcpyDirection: return 1;
    case cudaErrorInvalidDeviceFunction: return 400;  // CUDA_ERROR_INVALID_HANDLE
    case cudaErrorInvalidResourceHandle: return 400;
    case cudaErrorInvalidSymbol: return 500;          // CUDA_ERROR_NOT_FOUND
    default: return static_cast<int>(e);
  }
}

int BoundContextDevice() { return t_bound_context; }

void BindContext(int device) {
  t_bound_context = device;
  if (device >= 0) SetCurrentDevice(device);
}

void TruthApiLine(const char* name, uint32_t cbid, int domain, bool nested, uint64_t start_ns,
                  uint64_t end_ns, uint32_t corr, int device, int result) {
  if (!TruthApiEnabled()) return;
  char line[384];
  std::snprintf(line, sizeof line,
                "{\"kind\":\"api\",\"name\":\"%s\",\"cbid\":%u,\"domain\":\"%s\",%s"
                "\"start_ns\":%llu,\"end_ns\":%llu,\"correlation_id\":%u,\"pid\":%d,\"tid\":%u,"
                "\"device\":%d,\"result\":%d}",
                name, cbid, domain == kDomainDriver ? "driver" : "runtime",
                nested ? "\"nested\":true," : "", static_cast<unsigned long long>(start_ns),
                static_cast<unsigned long long>(end_ns), corr, static_cast<int>(ProcessId()),
                CurrentTid(), device, result);
  TruthAppend(line);
}

DriverCall::DriverCall(uint32_t cbid, const char* name, const void* params, int device,
                       const char* symbol)
    : cbid_(cbid), name_(name), params_(params), symbol_(symbol), device_(device) {
  const ApiFrame& outer = OutermostApi();
  nested_ = outer.domain == kDomainRuntime;
  corr_ = outer.domain != 0 ? outer.correlation_id : simgpuDriverNextCorrelationId();
  PushApi(corr_, name_, kDomainDriver);
  start_ns_ = NowNs();
  if (const SimgpuToolHooks* h = CurrentHooks(); h && h->on_api) {
    SimgpuApiCallback cb{};
    cb.site = 0;  // CUPTI_API_ENTER
    cb.domain = kDomainDriver;
    cb.cbid = cbid_;
    cb.function_name = name_;
    cb.function_params = params_;
    cb.symbol_name = symbol_;
    cb.context = device_ >= 0 ? ContextHandle(device_) : nullptr;
    cb.context_uid = device_ >= 0 ? ContextId(device_) : 0;
    cb.correlation_id = corr_;
    cb.correlation_data = &correlation_data_;
    h->on_api(&cb);
  }
}

DriverCall::~DriverCall() {
  if (!finished_) PopApi();
}

int DriverCall::Finish(int result) {
  if (finished_) return result;
  finished_ = true;
  const SimgpuToolHooks* h = CurrentHooks();
  if (h && h->on_api) {
    SimgpuApiCallback cb{};
    cb.site = 1;  // CUPTI_API_EXIT
    cb.domain = kDomainDriver;
    cb.cbid = cbid_;
    cb.function_name = name_;
    cb.function_params = params_;
    cb.function_return_value = &result;
    cb.symbol_name = symbol_;
    cb.context = device_ >= 0 ? ContextHandle(device_) : nullptr;
    cb.context_uid = device_ >= 0 ? ContextId(device_) : 0;
    cb.correlation_id = corr_;
    cb.correlation_data = &correlation_data_;
    h->on_api(&cb);
  }
  uint64_t end_ns = NowNs();
  TruthApiLine(name_, cbid_, kDomainDriver, nested_, start_ns_, end_ns, corr_, device_, result);
  if (h && h->on_api_record) {
    SimgpuApiRecord rec{};
    rec.cbid = cbid_;
    rec.domain = kDomainDriver;
    rec.start_ns = start_ns_;
    rec.end_ns = end_ns;
    rec.process_id = ProcessId();
    rec.thread_id = CurrentTid();
    rec.correlation_id = corr_;
    rec.return_value = result;
    h->on_api_record(&rec);
  }
  PopApi();
  return result;
}

}  // namespace simgpu
