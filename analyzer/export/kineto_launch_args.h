// kineto_launch_args.h — a kernel's launch configuration and a device's SM limits under the names
// the PyTorch profiler (Kineto) gives them, for every trace-event export: the kernel args "grid"
// and "block" ([x, y, z]), "registers per thread" and "shared memory" (static + dynamic bytes per
// block), and a deviceProperties entry with cudaDeviceProp's field names ("numSms",
// "computeMajor", "maxThreadsPerMultiprocessor", "regsPerBlock", "sharedMemPerBlockOptin", ...).
//
// They are what the Kineto importer (analyzer/import/kineto/) reads back, so that an export of
// any trace, re-read by gsanalyze, sizes its kernels as the original did (the same SM coverage
// and kernel_configs[]). The importer derives a block's reserved shared memory from
// sharedMemPerMultiprocessor − sharedMemPerBlockOptin (there is no field for it); a device whose
// reserve differs from that is sized differently after the round trip.
//
// Plain functions; thread-safe.
#ifndef GPUSTALL_ANALYZER_EXPORT_KINETO_LAUNCH_ARGS_H_
#define GPUSTALL_ANALYZER_EXPORT_KINETO_LAUNCH_ARGS_H_

#include <string>

#include "analyzer/model/trace_tables.h"
#include "analyzer/model/types.h"

namespace gs::analyzer {

// Appends `,"grid":[...],"block":[...]` and, when the configuration says them, the registers and
// shared memory, to a JSON object being written (after its first member, before its closing brace).
void AppendLaunchArgs(const LaunchConfig& config, std::string* args);

// One deviceProperties entry: "id", "name", "totalGlobalMem"; "numSms" when known;
// "computeMajor"/"computeMinor" when known; the SM limits when the device has them
// (DeviceDescription::sm, meaningful when max_threads_per_sm > 0).
std::string DevicePropertiesJson(const DeviceDescription& device);

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_EXPORT_KINETO_LAUNCH_ARGS_H_
