// occupancy.h — how many blocks of a kernel one SM holds at once, and what limits it: the
// theoretical occupancy of a launch configuration on a device, as NVIDIA's occupancy calculator
// (the toolkit's cuda_occupancy.h, cudaOccMaxActiveBlocksPerMultiprocessor) computes it for the
// default shared-memory carveout, reimplemented here so that the analyzer needs no CUDA.
//
// The limits (NVIDIA's calculator; per compute capability where they differ, as its tables give):
//   warps      ⌊(max threads per SM / 32) / ⌈threads per block / 32⌉⌋; 0 above max threads per block
//   registers  registers per warp rounded up to 256, warps per SM sub-partition (4) that fit its
//              quarter of the register file, times 4, over the block's warps; 0 when the block
//              needs more than the per-block register file (its warps rounded up to 4) or a thread
//              more than 256 registers
//   shared     the block's static + dynamic + reserved shared memory, rounded up to 128 bytes
//              (256 before cc 8), into the SM's shared memory; 0 above the per-block limit, which
//              is the opt-in one for a kernel that uses more than the default (it launched, so it
//              opted in) and includes the reserved bytes from cc 8
//   blocks     the SM's block slots: 32 (7.0, 8.0, 9.0, 10.0), 16 (7.5, 8.6, 8.7), 24 (8.9, 10.1,
//              11.0, 12.x)
//   barriers   from cc 9, block barriers (one a block): the SM's barrier slots
// The result is the least of them; every limit equal to it is a limiter. Proven equal to NVIDIA's
// calculator on a generated table of configurations (analyzer/testdata/occupancy_table.csv, made
// by tests/occupancy/ where the toolkit is installed; analyzer.OccupancyTest compares everywhere).
// Not modelled: carveouts other than the default (the whole shared memory), clusters, and
// kernels with more than one block barrier or with virtual resources (cc 10 and up).
#ifndef GPUSTALL_ANALYZER_OCCUPANCY_OCCUPANCY_H_
#define GPUSTALL_ANALYZER_OCCUPANCY_OCCUPANCY_H_

#include <cstdint>
#include <string>

namespace gs {

// What limits an SM's resident blocks (bits of OccupancyResult::limiters).
enum OccupancyLimiter : uint32_t {
  kLimitWarps = 1,
  kLimitRegisters = 2,
  kLimitSharedMemory = 4,
  kLimitBlocks = 8,
  kLimitBarriers = 16,
};

// The SM limits of a device (CUDA's device attributes; CUPTI's device record has most of them).
struct OccupancyDevice {
  int cc_major = 0;
  int cc_minor = 0;
  int max_threads_per_block = 1024;
  int max_threads_per_sm = 0;
  int warp_size = 32;
  int registers_per_block = 65536;
  int registers_per_sm = 65536;
  int64_t shared_per_block = 49152;        // the default per-block limit
  int64_t shared_per_block_optin = 0;      // the opt-in limit (cudaFuncAttributeMaxDynamicSharedMemorySize)
  int64_t shared_per_sm = 0;               // the whole carveout: the default carveout uses it all
  int64_t reserved_shared_per_block = 0;   // the system's share of each block (cc 8 and up: 1 KiB)
};

// A kernel's launch configuration and resources.
struct KernelResources {
  int threads_per_block = 0;
  int registers_per_thread = 0;
  int64_t static_shared = 0;
  int64_t dynamic_shared = 0;
};

struct OccupancyResult {
  bool known = false;       // false: a compute capability the calculator has no tables for
  int active_blocks = 0;    // blocks an SM holds at once
  uint32_t limiters = 0;    // OccupancyLimiter bits: the limits equal to active_blocks
  int limit_warps = 0, limit_registers = 0, limit_shared = 0, limit_blocks = 0, limit_barriers = 0;
  double theoretical_occupancy = 0;  // active warps over the SM's maximum warps
};

OccupancyResult ActiveBlocksPerSm(const OccupancyDevice& device, const KernelResources& kernel);

// OccupancyLimiter bits as names, "+"-joined: "warps", "registers", "shared_memory", "blocks",
// "barriers" ("registers+shared_memory"); "" for none.
std::string LimiterNames(uint32_t limiters);

// How much of the device a launch of `blocks` blocks fills, with A = active blocks per SM (0 when
// unknown) on N SMs (the figures of DCGM's SM_ACTIVE model and NVIDIA's wave quantisation; the
// assumptions: equal block durations, blocks placed breadth-first):
//   blocks_per_sm     B / N
//   sm_coverage       min(1, B / N): the share of SMs that hold a block while the kernel runs
//   waves             r = ⌈B / (N·A)⌉; wave_efficiency B / (r·N·A)
//   wave_coverage     1 when B fills whole waves, else (F + min(R, N)/N) / r, with F = ⌊B / (N·A)⌋
//                     full waves and R = B − F·N·A blocks in the last one; sm_coverage without A
//   est_occupancy     theoretical occupancy × wave efficiency (resident warps over the maximum,
//                     averaged over the waves: an upper bound, not achieved)
struct LaunchFill {
  double blocks_per_sm = 0;
  double sm_coverage = 0;
  int64_t waves = 0;           // 0 when A is unknown
  double wave_efficiency = 0;
  double wave_coverage = 0;
  double est_occupancy = 0;
};
LaunchFill FillOf(int64_t blocks, int sms, const OccupancyResult& occupancy);

}  // namespace gs

#endif  // GPUSTALL_ANALYZER_OCCUPANCY_OCCUPANCY_H_
