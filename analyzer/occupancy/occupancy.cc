// occupancy.cc
#include "analyzer/occupancy/occupancy.h"

#include <algorithm>
#include <climits>

namespace gs {
namespace {

int64_t RoundUp(int64_t x, int64_t to) { return (x + to - 1) / to * to; }
int DivideRoundUp(int x, int y) { return (x + y - 1) / y; }

// The SM's block slots; 0 for a compute capability without a table.
int BlockSlots(int major, int minor) {
  switch (major) {
    case 7: return minor == 5 ? 16 : 32;
    case 8: return minor == 0 ? 32 : minor == 9 ? 24 : 16;
    case 9: return 32;
    case 10: return minor == 1 ? 24 : 32;
    case 11: return minor == 0 ? 24 : 32;
    case 12: return 24;
    default: return 0;
  }
}

// Block barriers an SM has, given its block slots (cc 9 and up).
int BarrierSlots(int major, int minor, int block_slots) {
  switch (major) {
    case 8: return minor == 0 ? 2 * block_slots : block_slots;
    case 10: return minor == 1 ? block_slots : 2 * block_slots;
    case 11: return minor == 0 ? block_slots : 2 * block_slots;
    case 12: return block_slots;
    default: return 2 * block_slots;  // 7.x, 9.x
  }
}

int WarpLimit(const OccupancyDevice& d, const KernelResources& k) {
  if (k.threads_per_block > d.max_threads_per_block) return 0;
  return (d.max_threads_per_sm / d.warp_size) / DivideRoundUp(k.threads_per_block, d.warp_size);
}

int RegisterLimit(const OccupancyDevice& d, const KernelResources& k) {
  constexpr int kGranularity = 256;   // registers are given to a warp 256 at a time
  constexpr int kSubPartitions = 4;   // an SM's register file is split four ways
  constexpr int kMaxPerThread = 256;
  const int warps = DivideRoundUp(k.threads_per_block, d.warp_size);
  const int per_warp = static_cast<int>(RoundUp(static_cast<int64_t>(k.registers_per_thread) * d.warp_size, kGranularity));
  const int64_t per_block = static_cast<int64_t>(per_warp) * warps;
  const int64_t per_block_assumed = static_cast<int64_t>(per_warp) * RoundUp(warps, kSubPartitions);
  if (d.registers_per_block < per_block_assumed || d.registers_per_block < per_block ||
      k.registers_per_thread > kMaxPerThread) {
    return 0;
  }
  if (per_warp == 0) return INT_MAX;
  const int warps_per_sub_partition = (d.registers_per_sm / kSubPartitions) / per_warp;
  return warps_per_sub_partition * kSubPartitions / warps;
}

int SharedLimit(const OccupancyDevice& d, const KernelResources& k) {
  const int64_t granularity = d.cc_major >= 8 ? 128 : 256;
  const int64_t static_bytes = k.static_shared + d.reserved_shared_per_block;
  const int64_t allocated = RoundUp(static_bytes + k.dynamic_shared, granularity);
  // A block that uses more than the default limit was launched with the opt-in one.
  int64_t per_block = k.static_shared + k.dynamic_shared > d.shared_per_block ? d.shared_per_block_optin
                                                                               : d.shared_per_block;
  if (d.cc_major >= 8) per_block += d.reserved_shared_per_block;
  if (allocated > per_block) return 0;
  if (allocated == 0) return INT_MAX;
  return static_cast<int>(d.shared_per_sm / allocated);
}

}  // namespace

OccupancyResult ActiveBlocksPerSm(const OccupancyDevice& device, const KernelResources& kernel) {
  OccupancyResult r;
  const int block_slots = BlockSlots(device.cc_major, device.cc_minor);
  // Limits no device has (a damaged or hand-made trace): unknown, rather than a division by zero,
  // an overflow or an infinite occupancy.
  constexpr int64_t kMaxCount = 1 << 20;          // threads, warps, registers: far above any device
  constexpr int64_t kMaxBytes = int64_t{1} << 40;  // shared memory
  auto in = [](int64_t v, int64_t lo, int64_t hi) { return v >= lo && v <= hi; };
  if (block_slots == 0 || device.cc_major < 7 || !in(kernel.threads_per_block, 1, kMaxCount) ||
      !in(device.warp_size, 1, 1024) || !in(device.max_threads_per_sm, device.warp_size, kMaxCount) ||
      !in(device.max_threads_per_block, 1, kMaxCount) || !in(device.registers_per_block, 0, kMaxCount) ||
      !in(device.registers_per_sm, 0, kMaxCount) || !in(kernel.registers_per_thread, 0, kMaxCount) ||
      !in(device.shared_per_block, 0, kMaxBytes) || !in(device.shared_per_block_optin, 0, kMaxBytes) ||
      !in(device.shared_per_sm, 0, kMaxBytes) || !in(device.reserved_shared_per_block, 0, kMaxBytes) ||
      !in(kernel.static_shared, 0, kMaxBytes) || !in(kernel.dynamic_shared, 0, kMaxBytes)) {
    return r;
  }
  r.known = true;
  r.limit_warps = WarpLimit(device, kernel);
  r.limit_registers = RegisterLimit(device, kernel);
  r.limit_shared = SharedLimit(device, kernel);
  r.limit_blocks = block_slots;
  int active = std::min({r.limit_registers, r.limit_shared, r.limit_warps, r.limit_blocks});
  if (active == r.limit_warps) r.limiters |= kLimitWarps;
  if (active == r.limit_registers) r.limiters |= kLimitRegisters;
  if (active == r.limit_shared) r.limiters |= kLimitSharedMemory;
  if (active == r.limit_blocks) r.limiters |= kLimitBlocks;
  r.limit_barriers = INT_MAX;
  if (device.cc_major >= 9) {  // one barrier a block
    r.limit_barriers = BarrierSlots(device.cc_major, device.cc_minor, block_slots);
    active = std::min(active, r.limit_barriers);
    if (active == r.limit_barriers) r.limiters |= kLimitBarriers;
  }
  r.active_blocks = active;
  const int max_warps = device.max_threads_per_sm / device.warp_size;
  r.theoretical_occupancy =
      static_cast<double>(active) * DivideRoundUp(kernel.threads_per_block, device.warp_size) / max_warps;
  return r;
}

LaunchFill FillOf(int64_t blocks, int sms, const OccupancyResult& occupancy) {
  LaunchFill f;
  if (blocks <= 0 || sms <= 0) return f;
  const double n = sms;
  f.blocks_per_sm = static_cast<double>(blocks) / n;
  f.sm_coverage = std::min(1.0, f.blocks_per_sm);
  f.wave_coverage = f.sm_coverage;
  const int64_t a = occupancy.known ? occupancy.active_blocks : 0;
  if (a <= 0) return f;
  const int64_t per_wave = static_cast<int64_t>(sms) * a;
  const int64_t full = blocks / per_wave;
  const int64_t rest = blocks - full * per_wave;
  f.waves = full + (rest > 0 ? 1 : 0);
  f.wave_efficiency = static_cast<double>(blocks) / (static_cast<double>(f.waves) * static_cast<double>(per_wave));
  f.wave_coverage = rest == 0 ? 1.0
                              : (static_cast<double>(full) + static_cast<double>(std::min<int64_t>(rest, sms)) / n) /
                                    f.waves;
  f.est_occupancy = occupancy.theoretical_occupancy * f.wave_efficiency;
  return f;
}

std::string LimiterNames(uint32_t limiters) {
  static constexpr struct {
    uint32_t bit;
    const char* name;
  } kNames[] = {{kLimitWarps, "warps"},
                {kLimitRegisters, "registers"},
                {kLimitSharedMemory, "shared_memory"},
                {kLimitBlocks, "blocks"},
                {kLimitBarriers, "barriers"}};
  std::string out;
  for (const auto& n : kNames) {
    if ((limiters & n.bit) == 0) continue;
    if (!out.empty()) out += "+";
    out += n.name;
  }
  return out;
}

}  // namespace gs
