// activity_layouts.h — the one table of the CUPTI activity record fields the agent reads, each
// through its kind's read layout: the oldest layout that has every field read (CUDA 12.0's), whose
// fields lie at the same offsets in every layout since (agent/cupti/NOTES.md §9).
//
// The read layouts are named once, here: activity_converter.cc reads each kind through its alias.
// X(READ_LAYOUT, CUDA_13_0_LAYOUT, FIELD). activity_converter.cc static_asserts each FIELD's offset
// in READ_LAYOUT against CUDA_13_0_LAYOUT; the layout test
// (agent/cupti/layout/) compiles the same table against every CUDA 12 CUPTI header set that
// tools/fetch-cuda12 fetched and compares the offsets with these headers'. A field read by the
// converter and missing here is a field nobody checked.
#ifndef GPUSTALL_AGENT_CUPTI_ACTIVITY_LAYOUTS_H_
#define GPUSTALL_AGENT_CUPTI_ACTIVITY_LAYOUTS_H_

#include <cupti_activity.h>  // whichever header set the including file is built against

namespace gs {
namespace cupti_layouts {
// Each kind's oldest layout that has every field read (CUDA 12.0's).
using KernelRecord = CUpti_ActivityKernel9;
using MemcpyRecord = CUpti_ActivityMemcpy5;
using PeerCopyRecord = CUpti_ActivityMemcpyPtoP4;
using MemsetRecord = CUpti_ActivityMemset4;  // 13.0 names its pad2 isDeviceLaunched: not read
using SyncRecord = CUpti_ActivitySynchronization;
using MemoryRecord = CUpti_ActivityMemory3;
}  // namespace cupti_layouts
}  // namespace gs

#define GS_CUPTI_READ_FIELDS(X)                                                           \
  X(gs::cupti_layouts::KernelRecord, CUpti_ActivityKernel10, kind)                                  \
  X(gs::cupti_layouts::KernelRecord, CUpti_ActivityKernel10, start)                                 \
  X(gs::cupti_layouts::KernelRecord, CUpti_ActivityKernel10, end)                                   \
  X(gs::cupti_layouts::KernelRecord, CUpti_ActivityKernel10, correlationId)                         \
  X(gs::cupti_layouts::KernelRecord, CUpti_ActivityKernel10, deviceId)                              \
  X(gs::cupti_layouts::KernelRecord, CUpti_ActivityKernel10, streamId)                              \
  X(gs::cupti_layouts::KernelRecord, CUpti_ActivityKernel10, contextId)                             \
  X(gs::cupti_layouts::KernelRecord, CUpti_ActivityKernel10, graphNodeId)                           \
  X(gs::cupti_layouts::KernelRecord, CUpti_ActivityKernel10, name)                                  \
  X(gs::cupti_layouts::KernelRecord, CUpti_ActivityKernel10, gridX)                                 \
  X(gs::cupti_layouts::KernelRecord, CUpti_ActivityKernel10, gridY)                                 \
  X(gs::cupti_layouts::KernelRecord, CUpti_ActivityKernel10, gridZ)                                 \
  X(gs::cupti_layouts::KernelRecord, CUpti_ActivityKernel10, blockX)                                \
  X(gs::cupti_layouts::KernelRecord, CUpti_ActivityKernel10, blockY)                                \
  X(gs::cupti_layouts::KernelRecord, CUpti_ActivityKernel10, blockZ)                                \
  X(gs::cupti_layouts::KernelRecord, CUpti_ActivityKernel10, registersPerThread)                    \
  X(gs::cupti_layouts::KernelRecord, CUpti_ActivityKernel10, staticSharedMemory)                    \
  X(gs::cupti_layouts::KernelRecord, CUpti_ActivityKernel10, dynamicSharedMemory)                   \
  X(gs::cupti_layouts::MemcpyRecord, CUpti_ActivityMemcpy6, kind)                                   \
  X(gs::cupti_layouts::MemcpyRecord, CUpti_ActivityMemcpy6, copyKind)                               \
  X(gs::cupti_layouts::MemcpyRecord, CUpti_ActivityMemcpy6, srcKind)                                \
  X(gs::cupti_layouts::MemcpyRecord, CUpti_ActivityMemcpy6, dstKind)                                \
  X(gs::cupti_layouts::MemcpyRecord, CUpti_ActivityMemcpy6, flags)                                  \
  X(gs::cupti_layouts::MemcpyRecord, CUpti_ActivityMemcpy6, bytes)                                  \
  X(gs::cupti_layouts::MemcpyRecord, CUpti_ActivityMemcpy6, start)                                  \
  X(gs::cupti_layouts::MemcpyRecord, CUpti_ActivityMemcpy6, end)                                    \
  X(gs::cupti_layouts::MemcpyRecord, CUpti_ActivityMemcpy6, deviceId)                               \
  X(gs::cupti_layouts::MemcpyRecord, CUpti_ActivityMemcpy6, contextId)                              \
  X(gs::cupti_layouts::MemcpyRecord, CUpti_ActivityMemcpy6, streamId)                               \
  X(gs::cupti_layouts::MemcpyRecord, CUpti_ActivityMemcpy6, correlationId)                          \
  X(gs::cupti_layouts::MemcpyRecord, CUpti_ActivityMemcpy6, graphNodeId)                            \
  X(gs::cupti_layouts::PeerCopyRecord, CUpti_ActivityMemcpyPtoP4, kind)                           \
  X(gs::cupti_layouts::PeerCopyRecord, CUpti_ActivityMemcpyPtoP4, copyKind)                       \
  X(gs::cupti_layouts::PeerCopyRecord, CUpti_ActivityMemcpyPtoP4, srcKind)                        \
  X(gs::cupti_layouts::PeerCopyRecord, CUpti_ActivityMemcpyPtoP4, dstKind)                        \
  X(gs::cupti_layouts::PeerCopyRecord, CUpti_ActivityMemcpyPtoP4, flags)                          \
  X(gs::cupti_layouts::PeerCopyRecord, CUpti_ActivityMemcpyPtoP4, bytes)                          \
  X(gs::cupti_layouts::PeerCopyRecord, CUpti_ActivityMemcpyPtoP4, start)                          \
  X(gs::cupti_layouts::PeerCopyRecord, CUpti_ActivityMemcpyPtoP4, end)                            \
  X(gs::cupti_layouts::PeerCopyRecord, CUpti_ActivityMemcpyPtoP4, deviceId)                       \
  X(gs::cupti_layouts::PeerCopyRecord, CUpti_ActivityMemcpyPtoP4, contextId)                      \
  X(gs::cupti_layouts::PeerCopyRecord, CUpti_ActivityMemcpyPtoP4, streamId)                       \
  X(gs::cupti_layouts::PeerCopyRecord, CUpti_ActivityMemcpyPtoP4, correlationId)                  \
  X(gs::cupti_layouts::MemsetRecord, CUpti_ActivityMemset4, kind)                                   \
  X(gs::cupti_layouts::MemsetRecord, CUpti_ActivityMemset4, bytes)                                  \
  X(gs::cupti_layouts::MemsetRecord, CUpti_ActivityMemset4, start)                                  \
  X(gs::cupti_layouts::MemsetRecord, CUpti_ActivityMemset4, end)                                    \
  X(gs::cupti_layouts::MemsetRecord, CUpti_ActivityMemset4, correlationId)                          \
  X(gs::cupti_layouts::MemsetRecord, CUpti_ActivityMemset4, graphNodeId)                            \
  X(gs::cupti_layouts::MemsetRecord, CUpti_ActivityMemset4, deviceId)                               \
  X(gs::cupti_layouts::MemsetRecord, CUpti_ActivityMemset4, streamId)                               \
  X(gs::cupti_layouts::MemsetRecord, CUpti_ActivityMemset4, contextId)                              \
  X(gs::cupti_layouts::MemsetRecord, CUpti_ActivityMemset4, memoryKind)                             \
  X(gs::cupti_layouts::MemsetRecord, CUpti_ActivityMemset4, flags)                                  \
  X(gs::cupti_layouts::SyncRecord, CUpti_ActivitySynchronization2, kind)                  \
  X(gs::cupti_layouts::SyncRecord, CUpti_ActivitySynchronization2, type)                  \
  X(gs::cupti_layouts::SyncRecord, CUpti_ActivitySynchronization2, start)                 \
  X(gs::cupti_layouts::SyncRecord, CUpti_ActivitySynchronization2, end)                   \
  X(gs::cupti_layouts::SyncRecord, CUpti_ActivitySynchronization2, correlationId)         \
  X(gs::cupti_layouts::SyncRecord, CUpti_ActivitySynchronization2, contextId)             \
  X(gs::cupti_layouts::SyncRecord, CUpti_ActivitySynchronization2, streamId)              \
  X(gs::cupti_layouts::SyncRecord, CUpti_ActivitySynchronization2, cudaEventId)           \
  X(gs::cupti_layouts::MemoryRecord, CUpti_ActivityMemory4, kind)                                   \
  X(gs::cupti_layouts::MemoryRecord, CUpti_ActivityMemory4, memoryOperationType)                    \
  X(gs::cupti_layouts::MemoryRecord, CUpti_ActivityMemory4, memoryKind)                             \
  X(gs::cupti_layouts::MemoryRecord, CUpti_ActivityMemory4, correlationId)                          \
  X(gs::cupti_layouts::MemoryRecord, CUpti_ActivityMemory4, address)                                \
  X(gs::cupti_layouts::MemoryRecord, CUpti_ActivityMemory4, bytes)                                  \
  X(gs::cupti_layouts::MemoryRecord, CUpti_ActivityMemory4, timestamp)                              \
  X(gs::cupti_layouts::MemoryRecord, CUpti_ActivityMemory4, deviceId)                               \
  X(gs::cupti_layouts::MemoryRecord, CUpti_ActivityMemory4, contextId)                              \
  X(gs::cupti_layouts::MemoryRecord, CUpti_ActivityMemory4, streamId)

#endif  // GPUSTALL_AGENT_CUPTI_ACTIVITY_LAYOUTS_H_
