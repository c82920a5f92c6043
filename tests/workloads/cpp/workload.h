// workload.h — what every C++ training-loop workload shares: flags, error checks, the clock, real
// CPU work of a given length, simulated kernel durations, double-buffered pinned uploads, and the
// one-line summary.
//
// Each workload is one .cu file (one translation unit) compiled by nvcc with --cudart=shared, so
// this header is header-only. Nothing here is planted: the planted functions live in the .cu
// files, marked GSW_PLANTED (noinline, so that they keep their own frame, symbol and line).
//
// Thread safety: Flags is used by main() only; everything else may be called from any thread.
#ifndef GPUSTALL_TESTS_WORKLOADS_CPP_WORKLOAD_H_
#define GPUSTALL_TESTS_WORKLOADS_CPP_WORKLOAD_H_

#include <cuda_runtime_api.h>
#include <time.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// A function whose frames a profiler must be able to name (function, file and line): never
// inlined, never merged with a caller, and kept in the dynamic symbol table (-rdynamic).
#define GSW_PLANTED __attribute__((noinline, used))

// Every CUDA call is checked; a failure ends the workload with the call, its place and the error.
#define GSW_CHECK(call) ::gsw::Check((call), #call, __FILE__, __LINE__)

// Device durations of this program's real __global__ kernels on simgpu, as the text of
// SIMGPU_KERNEL_DURATIONS ("name=duration,...": see tests/simgpu/README.md). simgpu reads that
// variable once, when the first kernel is registered: nvcc's registration runs in a default
// priority constructor, so this constructor (priority 101) runs before it. Entries the user
// already set win, because simgpu takes the first matching entry. A real GPU ignores all this.
#define GSW_SIMULATED_KERNEL_DURATIONS(text)                                       \
  __attribute__((constructor(101))) static void gsw_set_simulated_durations() {   \
    ::gsw::AppendKernelDurations(text);                                            \
  }

namespace gsw {

inline void Check(cudaError_t err, const char* call, const char* file, int line) {
  if (err == cudaSuccess) return;
  std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", file, line, call, cudaGetErrorName(err),
               cudaGetErrorString(err));
  std::exit(1);
}

// CLOCK_MONOTONIC in nanoseconds: the clock simgpu's truth file uses.
inline uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

inline double MsBetween(uint64_t start_ns, uint64_t end_ns) {
  return static_cast<double>(end_ns - start_ns) / 1e6;
}

inline void AppendKernelDurations(const char* ours) {
  const char* user = std::getenv("SIMGPU_KERNEL_DURATIONS");
  std::string merged = (user && *user) ? std::string(user) + "," + ours : std::string(ours);
  setenv("SIMGPU_KERNEL_DURATIONS", merged.c_str(), 1);
}

// Real CPU work for `ms` milliseconds of wall time: it fills `out` (n floats) with augmented
// samples, pass after pass, until the time is up, so a sampler sees this thread on the CPU and
// the batch really is the product of the work. The clock is read once per 4096 elements.
// Returns a checksum so the compiler cannot drop the work. Never inlined: a sample taken here
// then shows CpuWork's frame above the planted caller's, whose own line is the call site (inlined
// into it, the PCs would map to this header's lines instead).
__attribute__((noinline)) inline float CpuWork(float* out, size_t n, double ms) {
  const uint64_t deadline = NowNs() + static_cast<uint64_t>(ms * 1e6);
  uint32_t state = 0x9e3779b9u;
  float checksum = 0.0f;
  size_t i = 0;
  for (;;) {
    for (size_t k = 0; k < 4096; ++k, ++i) {
      if (i == n) i = 0;
      state = state * 1664525u + 1013904223u;  // LCG: a cheap "random crop/jitter"
      float sample = static_cast<float>(state >> 8) * (1.0f / 16777216.0f);
      float v = out[i] * 0.5f + sample * 0.5f;  // blend with the previous pass
      out[i] = v;
      checksum += v;
    }
    if (NowNs() >= deadline) return checksum;
  }
}

// --name value / --name=value flags, declared by the workload with a default and a help line.
class Flags {
 public:
  Flags(const char* program, const char* about) : program_(program), about_(about) {}

  void Add(const char* name, long* value, const char* help) {
    flags_.push_back({name, help, value, nullptr});
  }
  void Add(const char* name, double* value, const char* help) {
    flags_.push_back({name, help, nullptr, value});
  }
  void Add(const char* name, std::string* value, const char* help) {
    flags_.push_back({name, help, nullptr, nullptr, value});
  }

  // Parses argv; prints help and exits 0 on --help, exits 2 on a bad flag.
  void Parse(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      if (arg == "--help" || arg == "-h") Usage(stdout, 0);
      if (arg.rfind("--", 0) != 0) Fail("unexpected argument '" + arg + "'");
      std::string name = arg.substr(2), value;
      size_t eq = name.find('=');
      if (eq != std::string::npos) {
        value = name.substr(eq + 1);
        name.resize(eq);
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        Fail("--" + name + " needs a value");
      }
      Set(name, value);
    }
  }

 private:
  struct Flag {
    const char* name;
    const char* help;
    long* int_value;
    double* real_value;
    std::string* text_value = nullptr;
  };

  void Set(const std::string& name, const std::string& value) {
    for (Flag& f : flags_) {
      if (name != f.name) continue;
      char* end = nullptr;
      errno = 0;
      if (f.text_value) {
        *f.text_value = value;
      } else if (f.int_value) {
        long v = std::strtol(value.c_str(), &end, 10);
        if (end == value.c_str() || *end != '\0' || errno != 0 || v < 0) {
          Fail("--" + name + " wants a non-negative integer, not '" + value + "'");
        }
        *f.int_value = v;
      } else {
        double v = std::strtod(value.c_str(), &end);
        if (end == value.c_str() || *end != '\0' || errno != 0 || v < 0) {
          Fail("--" + name + " wants a non-negative number, not '" + value + "'");
        }
        *f.real_value = v;
      }
      return;
    }
    Fail("unknown flag --" + name);
  }

  [[noreturn]] void Fail(const std::string& why) {
    std::fprintf(stderr, "%s: %s\n", program_, why.c_str());
    Usage(stderr, 2);
  }

  [[noreturn]] void Usage(FILE* out, int code) {
    std::fprintf(out, "usage: %s [flags]\n%s\n", program_, about_);
    for (const Flag& f : flags_) {
      if (f.text_value) {
        std::fprintf(out, "  --%-14s %s (default '%s')\n", f.name, f.help, f.text_value->c_str());
      } else if (f.int_value) {
        std::fprintf(out, "  --%-14s %s (default %ld)\n", f.name, f.help, *f.int_value);
      } else {
        std::fprintf(out, "  --%-14s %s (default %g)\n", f.name, f.help, *f.real_value);
      }
    }
    std::exit(code);
  }

  const char* program_;
  const char* about_;
  std::vector<Flag> flags_;
};

// The one-line summary every workload prints at the end: "workload=NAME key=value ...".
class Summary {
 public:
  explicit Summary(const char* workload) { line_ = std::string("workload=") + workload; }
  Summary& Add(const char* key, long v) { return Text(key, std::to_string(v)); }
  Summary& Add(const char* key, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    return Text(key, buf);
  }
  void Print() const { std::printf("%s\n", line_.c_str()); std::fflush(stdout); }

 private:
  Summary& Text(const char* key, const std::string& v) {
    line_ += std::string(" ") + key + "=" + v;
    return *this;
  }
  std::string line_;
};

// Two pinned staging buffers for a loop that uploads one host batch per step (the loader hands
// over pageable memory; the step copies it into pinned memory and enqueues the upload): a slot is
// reused once the copy that read it two steps before has finished (its event).
class PinnedStaging {
 public:
  explicit PinnedStaging(size_t bytes) : bytes_(bytes) {
    for (int i = 0; i < 2; ++i) {
      GSW_CHECK(cudaMallocHost(&pinned_[i], bytes));
      GSW_CHECK(cudaEventCreateWithFlags(&copied_[i], cudaEventDisableTiming));
    }
  }
  ~PinnedStaging() {
    for (int i = 0; i < 2; ++i) {
      GSW_CHECK(cudaEventDestroy(copied_[i]));
      GSW_CHECK(cudaFreeHost(pinned_[i]));
    }
  }
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;

  // Blocks until step's slot is free (its copy of two steps before has finished).
  void WaitForSlot(long step) {
    if (step >= 2) GSW_CHECK(cudaEventSynchronize(copied_[step % 2]));
  }
  // Copies `batch` (bytes_ of it) into step's slot and enqueues its upload to `device` on `stream`.
  void Upload(long step, const void* batch, void* device, cudaStream_t stream) {
    const int slot = static_cast<int>(step % 2);
    std::memcpy(pinned_[slot], batch, bytes_);
    GSW_CHECK(cudaMemcpyAsync(device, pinned_[slot], bytes_, cudaMemcpyHostToDevice, stream));
    GSW_CHECK(cudaEventRecord(copied_[slot], stream));
  }

 private:
  size_t bytes_;
  void* pinned_[2] = {};
  cudaEvent_t copied_[2] = {};
};

// A batch's samples in host memory, one allocation each: pageable (a std::vector per sample, as
// a naive collate leaves them: a cudaMemcpyAsync from one blocks the host until its transfer is
// done) or, `pinned`, from cudaMallocHost (the fix: such copies queue without blocking).
class HostSamples {
 public:
  HostSamples(long count, size_t floats, float value, bool pinned) : pinned_(pinned) {
    for (long s = 0; s < count; ++s) {
      float* sample = nullptr;
      if (pinned) {
        GSW_CHECK(cudaMallocHost(reinterpret_cast<void**>(&sample), floats * sizeof(float)));
        for (size_t i = 0; i < floats; ++i) sample[i] = value;
      } else {
        pageable_.emplace_back(floats, value);
        sample = pageable_.back().data();
      }
      samples_.push_back(sample);
    }
  }
  ~HostSamples() {
    if (pinned_)
      for (float* sample : samples_) GSW_CHECK(cudaFreeHost(sample));
  }
  HostSamples(const HostSamples&) = delete;
  HostSamples& operator=(const HostSamples&) = delete;

  std::vector<float*>& samples() { return samples_; }

 private:
  bool pinned_;
  std::vector<std::vector<float>> pageable_;
  std::vector<float*> samples_;
};

}  // namespace gsw

#endif  // GPUSTALL_TESTS_WORKLOADS_CPP_WORKLOAD_H_
