#include "analyzer/export/kineto_launch_args.h"

#include "absl/strings/str_cat.h"
#include "analyzer/export/chrome_trace_writer.h"

namespace gs::analyzer {

void AppendLaunchArgs(const LaunchConfig& c, std::string* args) {
  absl::StrAppend(args, ",\"grid\":[", c.grid[0], ",", c.grid[1], ",", c.grid[2], "],\"block\":[", c.block[0], ",",
                  c.block[1], ",", c.block[2], "]");
  if (c.has_resources)
    absl::StrAppend(args, ",\"registers per thread\":", c.registers_per_thread, ",\"shared memory\":",
                    c.shared_memory_bytes);
}

std::string DevicePropertiesJson(const DeviceDescription& d) {
  std::string out = absl::StrCat("{\"id\":", d.index, ",\"name\":", JsonQuote(d.name), ",\"totalGlobalMem\":",
                                 d.total_memory);
  if (d.sm_count > 0) absl::StrAppend(&out, ",\"numSms\":", d.sm_count);
  const OccupancyDevice& sm = d.sm;
  if (sm.cc_major > 0) absl::StrAppend(&out, ",\"computeMajor\":", sm.cc_major, ",\"computeMinor\":", sm.cc_minor);
  if (sm.max_threads_per_sm > 0)
    absl::StrAppend(&out, ",\"maxThreadsPerBlock\":", sm.max_threads_per_block, ",\"maxThreadsPerMultiprocessor\":",
                    sm.max_threads_per_sm, ",\"regsPerBlock\":", sm.registers_per_block, ",\"warpSize\":",
                    sm.warp_size, ",\"sharedMemPerBlock\":", sm.shared_per_block, ",\"regsPerMultiprocessor\":",
                    sm.registers_per_sm, ",\"sharedMemPerBlockOptin\":", sm.shared_per_block_optin,
                    ",\"sharedMemPerMultiprocessor\":", sm.shared_per_sm);
  return out + "}";
}

}  // namespace gs::analyzer
