// ptxas_log.h — what ptxas said of each kernel it compiled (`nvcc -Xptxas -v`, whose stderr the
// build keeps beside the cubin), the ground truth the cubin reader's registers and static shared
// memory are compared against. CUDA 13.0's ptxas prints, per kernel and architecture:
//   ptxas info    : Compiling entry function '_Z5tiledPfPKf' for 'sm_90'
//   ptxas info    : Function properties for _Z5tiledPfPKf
//       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 12 registers, used 1 barriers, 4000 bytes smem
// ("N bytes smem" left out when there is none).
#ifndef GPUSTALL_TESTS_SIMGPU_TESTS_PTXAS_LOG_H_
#define GPUSTALL_TESTS_SIMGPU_TESTS_PTXAS_LOG_H_

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

namespace simgpu_test {

struct PtxasKernel {
  int registers = -1;
  long static_shared_bytes = 0;
};

// The kernels ptxas compiled for `arch` ("sm_90"), by name; empty when the log is unreadable.
inline std::map<std::string, PtxasKernel> ReadPtxasLog(const std::string& path,
                                                       const std::string& arch) {
  std::map<std::string, PtxasKernel> kernels;
  std::ifstream in(path);
  std::string current;  // the kernel the lines now describe, "" for another architecture
  const std::string compiling = "Compiling entry function '";
  for (std::string line; std::getline(in, line);) {
    size_t at = line.find(compiling);
    if (at != std::string::npos) {
      size_t start = at + compiling.size();
      size_t end = line.find('\'', start);
      bool ours = line.find("for '" + arch + "'") != std::string::npos;
      current = ours && end != std::string::npos ? line.substr(start, end - start) : "";
      continue;
    }
    at = line.find("Used ");
    if (current.empty() || at == std::string::npos) continue;
    PtxasKernel k;
    k.registers = std::atoi(line.c_str() + at + 5);
    size_t smem = line.find(" bytes smem");
    if (smem != std::string::npos) {
      size_t start = line.rfind(' ', smem - 1);
      k.static_shared_bytes = std::atol(line.c_str() + start + 1);
    }
    kernels[current] = k;
    current.clear();
  }
  return kernels;
}

}  // namespace simgpu_test

#endif  // GPUSTALL_TESTS_SIMGPU_TESTS_PTXAS_LOG_H_
