// config.cc — the clock and the environment variables of the model (documented in README.md).
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "driver/internal.h"
#include "driver/spinning_mutex.h"

namespace simgpu {

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void WaitUntilNs(uint64_t t) {
  // Sleep through the bulk of a long wait, spin the last stretch: launch costs are a few
  // microseconds, far below the scheduler's sleep granularity, and must still be paid in full.
  constexpr uint64_t kSpinNs = 200000;
  for (;;) {
    uint64_t now = NowNs();
    if (now >= t) return;
    if (t - now > kSpinNs) {
      uint64_t sleep_ns = t - now - kSpinNs / 2;
      timespec ts{static_cast<time_t>(sleep_ns / 1000000000ull),
                  static_cast<long>(sleep_ns % 1000000000ull)};
      nanosleep(&ts, nullptr);
    } else {
      SpinningMutex::CpuRelax();
    }
  }
}

uint32_t CurrentTid() {
  static thread_local uint32_t tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return tid;
}

namespace {

std::atomic<uint32_t> g_pid{0};

void RefreshProcessIdInChild() { g_pid.store(static_cast<uint32_t>(getpid()), std::memory_order_relaxed); }

}  // namespace

uint32_t ProcessId() {
  uint32_t pid = g_pid.load(std::memory_order_relaxed);
  if (__builtin_expect(pid != 0, 1)) return pid;
  // First call: register the child handler once, then cache. Two threads racing here both store
  // the same value and register once (the static's initialisation is thread-safe).
  static const int registered = pthread_atfork(nullptr, nullptr, &RefreshProcessIdInChild);
  (void)registered;
  pid = static_cast<uint32_t>(getpid());
  g_pid.store(pid, std::memory_order_relaxed);
  return pid;
}

namespace {

[[noreturn]] void BadValue(const char* var, const char* value, const char* expected) {
  std::fprintf(stderr, "simgpu: %s=\"%s\" is not %s\n", var, value, expected);
  std::exit(2);
}

}  // namespace

// "2500", "2.5us", "3ms", "1s" -> nanoseconds.
uint64_t ParseDurationNs(const char* var, const char* s) {
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s, &end);
  if (end == s || errno != 0 || v < 0 || !std::isfinite(v)) {
    BadValue(var, s, "a duration (e.g. 2500, 2.5us, 3ms, 1s)");
  }
  std::string unit(end);
  double scale = 1;
  if (unit.empty() || unit == "ns") scale = 1;
  else if (unit == "us") scale = 1e3;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "s") scale = 1e9;
  else BadValue(var, s, "a duration (e.g. 2500, 2.5us, 3ms, 1s)");
  return static_cast<uint64_t>(std::llround(v * scale));
}

namespace {

// "1073741824", "16G", "512M", "64K" (binary units) -> bytes.
uint64_t ParseBytes(const char* var, const char* s) {
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s, &end);
  if (end == s || errno != 0 || v < 0 || !std::isfinite(v)) {
    BadValue(var, s, "a byte count (e.g. 1073741824, 512M, 16G)");
  }
  std::string unit(end);
  double scale = 1;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "K" || unit == "KiB") scale = 1024.0;
  else if (unit == "M" || unit == "MiB") scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "GiB") scale = 1024.0 * 1024 * 1024;
  else if (unit == "T" || unit == "TiB") scale = 1024.0 * 1024 * 1024 * 1024;
  else BadValue(var, s, "a byte count (e.g. 1073741824, 512M, 16G)");
  return static_cast<uint64_t>(v * scale);
}

// Bytes per second: "25e9", "25GB/s" (decimal units, as bandwidths are quoted).
double ParseBandwidth(const char* var, const char* s) {
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s, &end);
  if (end == s || errno != 0 || !(v > 0) || !std::isfinite(v)) {
    BadValue(var, s, "a positive bandwidth in bytes/s (e.g. 25e9 or 25GB/s)");
  }
  std::string unit(end);
  if (unit.empty() || unit == "B/s") return v;
  if (unit == "KB/s") return v * 1e3;
  if (unit == "MB/s") return v * 1e6;
  if (unit == "GB/s") return v * 1e9;
  BadValue(var, s, "a positive bandwidth in bytes/s (e.g. 25e9 or 25GB/s)");
}

void Duration(const char* var, uint64_t* out) {
  if (const char* v = std::getenv(var); v && *v) *out = ParseDurationNs(var, v);
}
void Bandwidth(const char* var, double* out) {
  if (const char* v = std::getenv(var); v && *v) *out = ParseBandwidth(var, v);
}
void Text(const char* var, std::string* out) {
  if (const char* v = std::getenv(var)) *out = v;
}

Config LoadConfig() {
  Config c;
  if (const char* v = std::getenv("SIMGPU_DEVICES"); v && *v) {
    char* end = nullptr;
    long n = std::strtol(v, &end, 10);
    if (*end != '\0' || n < 0 || n > 64) BadValue("SIMGPU_DEVICES", v, "an integer 0..64");
    c.devices = static_cast<int>(n);
  }
  if (const char* v = std::getenv("SIMGPU_MEMORY_BYTES"); v && *v) {
    c.memory_bytes = ParseBytes("SIMGPU_MEMORY_BYTES", v);
  }
  Duration("SIMGPU_KERNEL_NS", &c.kernel_ns);
  Text("SIMGPU_KERNEL_DURATIONS", &c.kernel_durations);
  Duration("SIMGPU_LAUNCH_HOST_NS", &c.launch_host_ns);
  Duration("SIMGPU_API_HOST_NS", &c.api_host_ns);
  Duration("SIMGPU_DEVICE_LATENCY_NS", &c.device_latency_ns);
  Duration("SIMGPU_COPY_LATENCY_NS", &c.copy_latency_ns);
  Duration("SIMGPU_STREAM_GAP_NS", &c.stream_gap_ns);
  Duration("SIMGPU_COMPLETION_BATCH_NS", &c.completion_batch_ns);
  Duration("SIMGPU_MALLOC_HOST_NS", &c.malloc_host_ns);
  Duration("SIMGPU_FREE_HOST_NS", &c.free_host_ns);
  Duration("SIMGPU_HOST_ALLOC_HOST_NS", &c.host_alloc_host_ns);
  Bandwidth("SIMGPU_BW_H2D_PINNED", &c.bw_h2d_pinned);
  Bandwidth("SIMGPU_BW_D2H_PINNED", &c.bw_d2h_pinned);
  Bandwidth("SIMGPU_BW_H2D_PAGEABLE", &c.bw_h2d_pageable);
  Bandwidth("SIMGPU_BW_D2H_PAGEABLE", &c.bw_d2h_pageable);
  Bandwidth("SIMGPU_BW_D2D", &c.bw_d2d);
  Bandwidth("SIMGPU_BW_PEER", &c.bw_peer);
  Bandwidth("SIMGPU_BW_H2H", &c.bw_h2h);
  Bandwidth("SIMGPU_BW_MEMSET", &c.bw_memset);
  Text("SIMGPU_TRUTH", &c.truth_path);
  if (const char* v = std::getenv("SIMGPU_TRUTH_API"); v && *v) {
    if (std::strcmp(v, "0") != 0 && std::strcmp(v, "1") != 0) BadValue("SIMGPU_TRUTH_API", v, "0 or 1");
    c.truth_api = v[0] == '1';
  }
  if (const char* v = std::getenv("SIMGPU_HOST_WAITS"); v && *v) {
    if (std::strcmp(v, "spin") != 0 && std::strcmp(v, "block") != 0) BadValue("SIMGPU_HOST_WAITS", v, "spin or block");
    c.host_waits_block = v[0] == 'b';
  }
  Text("SIMGPU_FAULT_KERNEL", &c.fault_kernel);
  Text("CUDA_INJECTION64_PATH", &c.injection_path);
  return c;
}

}  // namespace

const Config& GetConfig() {
  static const Config* config = new Config(LoadConfig());  // never freed: used until exit
  return *config;
}

}  // namespace simgpu
