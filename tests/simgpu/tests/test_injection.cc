// test_injection.cc — a CUDA_INJECTION64_PATH library for truth_test.cc. InitializeInjection
// counts its calls and installs simgpu's tool hooks; every hook appends a line to
// $SIMGPU_TEST_INJECTION_LOG (with SIMGPU_TEST_INJECTION_CALLS_CUDA set, it first calls
// cudaGetDeviceCount itself):
//   init <now_ns> <call number>
//   api <site> <cbid> <function name> <correlation id> <symbol or -> [count=<n> for cudaMemcpy]
//   record <cbid> <correlation id> <start_ns> <end_ns>
//   op <kind> <correlation id> <start_ns> <end_ns> <stream id>
#include <cuda_runtime_api.h>
#include <generated_cuda_runtime_api_meta.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "driver/tool_hooks.h"
#include "simgpu.h"

namespace {

std::mutex g_mu;
FILE* g_log = nullptr;
std::atomic<int> g_calls{0};

void OnApi(const SimgpuApiCallback* cb) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::fprintf(g_log, "api %d %u %s %u %s", cb->site, cb->cbid, cb->function_name,
               cb->correlation_id, cb->symbol_name ? cb->symbol_name : "-");
  if (std::strcmp(cb->function_name, "cudaMemcpy_v3020") == 0 && cb->function_params) {
    auto* p = static_cast<const cudaMemcpy_v3020_params*>(cb->function_params);
    std::fprintf(g_log, " count=%zu kind=%d", p->count, static_cast<int>(p->kind));
  }
  if (cb->site == 0) *cb->correlation_data = cb->correlation_id;
  if (cb->site == 1 && *cb->correlation_data != cb->correlation_id) {
    std::fprintf(g_log, " correlation_data_lost");
  }
  std::fprintf(g_log, "\n");
  std::fflush(g_log);
}

void OnRecord(const SimgpuApiRecord* r) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::fprintf(g_log, "record %u %u %llu %llu\n", r->cbid, r->correlation_id,
               static_cast<unsigned long long>(r->start_ns),
               static_cast<unsigned long long>(r->end_ns));
  std::fflush(g_log);
}

void OnOp(const SimgpuOpRecord* op) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::fprintf(g_log, "op %d %u %llu %llu %u\n", static_cast<int>(op->kind), op->correlation_id,
               static_cast<unsigned long long>(op->start_ns),
               static_cast<unsigned long long>(op->end_ns), op->stream_id);
  std::fflush(g_log);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  int n = ++g_calls;
  const char* path = std::getenv("SIMGPU_TEST_INJECTION_LOG");
  if (g_log == nullptr) g_log = std::fopen(path ? path : "/dev/null", "a");
  {
    std::lock_guard<std::mutex> lock(g_mu);
    std::fprintf(g_log, "init %llu %d\n", static_cast<unsigned long long>(simgpuNowNs()), n);
    std::fflush(g_log);
  }
  // A tool may call CUDA from here (the driver is initialising on this very thread): it must
  // neither deadlock nor run InitializeInjection again.
  if (std::getenv("SIMGPU_TEST_INJECTION_CALLS_CUDA") != nullptr) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) std::abort();
  }
  static const SimgpuToolHooks hooks{OnApi, OnRecord, OnOp, nullptr};  // no graph node events
  simgpuDriverSetToolHooks(&hooks);
  return 1;
}
