// nvtx_injection.h — the agent as an NVTX v3 injection library (agent/cupti/NOTES.md §4).
//
// NVTX is header-only: every module (executable or shared library) that uses it has its own
// function-pointer tables, and on its first NVTX call it dlopens the library named by
// NVTX_INJECTION64_PATH and calls that library's `InitializeInjectionNvtx2(getExportTable)`.
// The shim exports that symbol and forwards here. Under LD_PRELOAD the path names the file that
// is already loaded, so dlopen returns this very instance: one collector per process.
//
// NvtxInitializeInjection fills the CORE (push/pop, start/end, marks, thread names) and CORE2
// (the same per domain, domain create, string registration) tables of the calling module with
// functions that record into NvtxCollector::Instance(). It is called once per module and fills
// every table it is given (no "already initialised" early return). Slots left empty are no-ops
// for NVTX. Not handled (no-ops): category names, resource naming, the CUDA/CUDART/OpenCL/sync
// modules, wide-character messages beyond ASCII (other characters become '?'), payloads.
//
// Returns 1 when the tables were filled, 0 to decline (NVTX then unloads the library for that
// module and every NVTX call there is a no-op): GS_ENABLE=0 / GS_DISABLE=1, a bad GS_* value, an
// export table NVTX did not provide, or a collector that cannot start.
//
// Thread safety: NVTX serialises initialisation per module; several modules may initialise on
// different threads at once (the collector starts once).
#ifndef GPUSTALL_AGENT_NVTX_NVTX_INJECTION_H_
#define GPUSTALL_AGENT_NVTX_NVTX_INJECTION_H_

#include <cstdint>

namespace gs {

// NvtxGetExportTableFunc_t (nvtxDetail/nvtxTypes.h), spelled without the NVTX headers.
using NvtxGetExportTable = const void* (*)(uint32_t export_table_id);

int NvtxInitializeInjection(NvtxGetExportTable get_export_table);

}  // namespace gs

#endif  // GPUSTALL_AGENT_NVTX_NVTX_INJECTION_H_
