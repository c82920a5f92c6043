// api_call.h — what every simgpu runtime entry point does around its work.
//
// An ApiCall is created at the top of each cuda* function:
//   1. driver initialisation (CUDA_INJECTION64_PATH runs here, before anything is reported),
//   2. a fresh correlation id, the API_ENTER hook with the real CUPTI cbid, function name and a
//      pointer to the real <api>_params struct,
// and Finish() does the rest:
//   3. the thread's last-error state (non-sticky errors until cudaGetLastError; a sticky device
//      error is returned by every later call),
//   4. the API_EXIT hook and the API activity record.
// The SG_API* macros build the params struct and the ApiCall from one tag, e.g.
//   SG_API(cudaMemcpy_v3020, dst, src, count, kind);
// which uses cudaMemcpy_v3020_params and CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020.
//
// Thread safety: an ApiCall belongs to the calling thread.
#ifndef GPUSTALL_TESTS_SIMGPU_CUDART_API_CALL_H_
#define GPUSTALL_TESTS_SIMGPU_CUDART_API_CALL_H_

#include <cuda_runtime_api.h>
#include <cupti_runtime_cbid.h>
#include <generated_cuda_runtime_api_meta.h>

#include <cstdint>

#include "driver/api_scope.h"
#include "driver/driver.h"

namespace simgpu {

// The calling thread's last (non-sticky) error. The current device lives in the driver
// (CurrentDevice/SetCurrentDevice), where tools can ask for the current context.
cudaError_t& LastError();
// Errors that, once raised, every later call returns (a corrupted context).
bool IsSticky(cudaError_t e);

class ApiCall {
 public:
  enum Checks { kInitAndSticky, kInitOnly, kNothing };
  ApiCall(uint32_t cbid, const char* name, const void* params, Checks checks = kInitAndSticky,
          const char* symbol = nullptr);
  ~ApiCall();
  ApiCall(const ApiCall&) = delete;
  ApiCall& operator=(const ApiCall&) = delete;

  // An error found before the call did anything (initialisation failed, sticky device error).
  cudaError_t early_error() const { return early_; }
  uint32_t correlation_id() const { return corr_; }
  int device() const { return device_; }
  void set_symbol(const char* symbol) { symbol_ = symbol; }

  // Records `result` as the call's outcome (last error, exit hook, API record); returns it.
  cudaError_t Finish(cudaError_t result) { return Finish(result, true); }
  // For cudaGetLastError/cudaPeekAtLastError: reports `result` without making it the last error.
  cudaError_t FinishReadingError(cudaError_t result) { return Finish(result, false); }

 private:
  cudaError_t Finish(cudaError_t result, bool set_last_error);

  uint32_t cbid_;
  const char* name_;
  const void* params_;
  const char* symbol_;
  uint32_t corr_ = 0;
  int device_ = 0;
  uint64_t start_ns_ = 0;
  uint64_t correlation_data_ = 0;
  cudaError_t early_ = cudaSuccess;
  bool entered_ = false;
};

// Per-thread-default-stream builds of api_streamed.cc choose the _ptsz/_ptds tags.
#ifdef SIMGPU_PTDS_UNIT
#define SG_PT(legacy_tag, per_thread_tag) per_thread_tag
constexpr bool kPerThreadDefaultStream = true;
#else
#define SG_PT(legacy_tag, per_thread_tag) legacy_tag
constexpr bool kPerThreadDefaultStream = false;
#endif

#define SG_CBID_(tag) CUPTI_RUNTIME_TRACE_CBID_##tag
#define SG_STR_(tag) #tag
#define SG_PARAMS_(tag) tag##_params

// Declares `call` for an API whose CUPTI params struct is <tag>_params, then returns early on
// an initialisation or sticky error.
#define SG_API_CHECKED_(checks, symbol, tag, ...)                                           \
  SG_PARAMS_(tag) sg_params{__VA_ARGS__};                                                   \
  ::simgpu::ApiCall call(SG_CBID_(tag), SG_STR_(tag), &sg_params, ::simgpu::ApiCall::checks, \
                         symbol);                                                           \
  if (call.early_error() != cudaSuccess) return call.Finish(call.early_error())
#define SG_API_EXPAND_(checks, symbol, tag, ...) SG_API_CHECKED_(checks, symbol, tag, __VA_ARGS__)
#define SG_API(tag, ...) SG_API_EXPAND_(kInitAndSticky, nullptr, tag, __VA_ARGS__)
#define SG_API_NOSTICKY(tag, ...) SG_API_EXPAND_(kInitOnly, nullptr, tag, __VA_ARGS__)
// Launches: the kernel name goes to the ENTER callback's symbolName.
#define SG_API_LAUNCH(symbol, tag, ...) SG_API_EXPAND_(kInitAndSticky, symbol, tag, __VA_ARGS__)
// For APIs without a params struct in generated_cuda_runtime_api_meta.h (no arguments):
// functionParams is NULL, as CUPTI passes for them.
#define SG_API0(tag)                                                                         \
  ::simgpu::ApiCall call(SG_CBID_(tag), SG_STR_(tag), nullptr, ::simgpu::ApiCall::kInitAndSticky); \
  if (call.early_error() != cudaSuccess) return call.Finish(call.early_error())

}  // namespace simgpu

#endif  // GPUSTALL_TESTS_SIMGPU_CUDART_API_CALL_H_
