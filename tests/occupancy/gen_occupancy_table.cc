// gen_occupancy_table.cc — NVIDIA's occupancy calculator (the toolkit's cuda_occupancy.h,
// cudaOccMaxActiveBlocksPerMultiprocessor, default carveout) over a grid of launch configurations
// on the devices of each compute capability 7.0 … 12.0: the table the analyzer's own calculator
// (analyzer/occupancy/occupancy.h) must equal (analyzer.OccupancyTest). Writes CSV to stdout:
//   device,cc,max_threads_per_sm,registers_per_sm,registers_per_block,shared_per_block,
//          shared_per_block_optin,shared_per_sm,reserved_shared_per_block
//   config,cc,threads,registers,static_shared,dynamic_shared,active_blocks,limiters
// A kernel whose shared memory exceeds the default per-block limit is given the opt-in limit (it
// launched, so it opted in). Device limits: the CUDA C++ Programming Guide's "Technical
// Specifications per Compute Capability" table and cudaGetDeviceProperties of a part of each
// capability (V100, T4, A100, A10, Orin, L4, H100, B200, RTX 5090).
#include <cuda_occupancy.h>

#include <cstdio>

namespace {

struct Device {
  int major, minor, max_threads_per_sm, shared_per_sm, optin, reserved;
};
const Device kDevices[] = {
    {7, 0, 2048, 98304, 98304, 0},      {7, 5, 1024, 65536, 65536, 0},
    {8, 0, 2048, 167936, 166912, 1024}, {8, 6, 1536, 102400, 101376, 1024},
    {8, 7, 1536, 167936, 166912, 1024}, {8, 9, 1536, 102400, 101376, 1024},
    {9, 0, 2048, 233472, 232448, 1024}, {10, 0, 2048, 233472, 232448, 1024},
    {12, 0, 1536, 102400, 101376, 1024},
};
const int kThreads[] = {32, 64, 96, 128, 256, 384, 640, 1024};
const int kRegisters[] = {0, 16, 32, 40, 64, 96, 168, 255};
const struct {
  int static_shared, dynamic_shared;
} kShared[] = {{0, 0},     {1024, 0},    {0, 6000},     {12288, 4096}, {0, 24576},
               {49152, 0}, {0, 65536},   {32768, 67584}, {0, 101376},  {0, 232448}};

}  // namespace

int main() {
  for (const Device& d : kDevices) {
    std::printf("device,%d.%d,%d,65536,65536,49152,%d,%d,%d\n", d.major, d.minor, d.max_threads_per_sm, d.optin,
                d.shared_per_sm, d.reserved);
  }
  for (const Device& d : kDevices) {
    cudaOccDeviceProp prop;
    prop.computeMajor = d.major;
    prop.computeMinor = d.minor;
    prop.maxThreadsPerBlock = 1024;
    prop.maxThreadsPerMultiprocessor = d.max_threads_per_sm;
    prop.regsPerBlock = 65536;
    prop.regsPerMultiprocessor = 65536;
    prop.warpSize = 32;
    prop.sharedMemPerBlock = 49152;
    prop.sharedMemPerMultiprocessor = d.shared_per_sm;
    prop.numSms = 80;
    prop.sharedMemPerBlockOptin = d.optin;
    prop.reservedSharedMemPerBlock = d.reserved;
    cudaOccDeviceState state;
    for (const int threads : kThreads) {
      for (const int registers : kRegisters) {
        for (const auto& shared : kShared) {
          cudaOccFuncAttributes attributes;
          attributes.maxThreadsPerBlock = 1024;
          attributes.numRegs = registers;
          attributes.sharedSizeBytes = static_cast<size_t>(shared.static_shared);
          const bool optin = shared.static_shared + shared.dynamic_shared > 49152;
          attributes.shmemLimitConfig = optin ? FUNC_SHMEM_LIMIT_OPTIN : FUNC_SHMEM_LIMIT_DEFAULT;
          attributes.maxDynamicSharedSizeBytes = static_cast<size_t>(shared.dynamic_shared);
          attributes.numBlockBarriers = 1;  // as for a real kernel (the constructor from cudaFuncAttributes)
          cudaOccResult result;
          const cudaOccError e = cudaOccMaxActiveBlocksPerMultiprocessor(
              &result, &prop, &attributes, &state, threads, static_cast<size_t>(shared.dynamic_shared));
          if (e != CUDA_OCC_SUCCESS) {
            std::fprintf(stderr, "cc %d.%d threads %d registers %d shared %d+%d: error %d\n", d.major, d.minor,
                         threads, registers, shared.static_shared, shared.dynamic_shared, static_cast<int>(e));
            continue;
          }
          std::printf("config,%d.%d,%d,%d,%d,%d,%d,%u\n", d.major, d.minor, threads, registers,
                      shared.static_shared, shared.dynamic_shared, result.activeBlocksPerMultiprocessor,
                      result.limitingFactors);
        }
      }
    }
  }
  return 0;
}
