// activity_layouts.h — the one table of the CUPTI activity record fields the agent reads, each
// through its kind's read layout: the oldest layout that has every field read (CUDA 12.0's), whose
// fields lie at the same offsets in every layout since (agent/cupti/NOTES.md §9).
//
// X(READ_LAYOUT, CUDA_13_0_LAYOUT, FIELD). activity_converter.cc reads through READ_LAYOUT and
// static_asserts each FIELD's offset against CUDA_13_0_LAYOUT; the layout test
// (agent/cupti/layout/) compiles the same table against every CUDA 12 CUPTI header set that
// tools/fetch-cuda12 fetched and compares the offsets with these headers'. A field read by the
// converter and missing here is a field nobody checked.
#ifndef GPUSTALL_AGENT_CUPTI_ACTIVITY_LAYOUTS_H_
#define GPUSTALL_AGENT_CUPTI_ACTIVITY_LAYOUTS_H_

#define GS_CUPTI_READ_FIELDS(X)                                                           \
  X(CUpti_ActivityKernel9, CUpti_ActivityKernel10, kind)                                  \
  X(CUpti_ActivityKernel9, CUpti_ActivityKernel10, start)                                 \
  X(CUpti_ActivityKernel9, CUpti_ActivityKernel10, end)                                   \
  X(CUpti_ActivityKernel9, CUpti_ActivityKernel10, correlationId)                         \
  X(CUpti_ActivityKernel9, CUpti_ActivityKernel10, deviceId)                              \
  X(CUpti_ActivityKernel9, CUpti_ActivityKernel10, streamId)                              \
  X(CUpti_ActivityKernel9, CUpti_ActivityKernel10, contextId)                             \
  X(CUpti_ActivityKernel9, CUpti_ActivityKernel10, graphNodeId)                           \
  X(CUpti_ActivityKernel9, CUpti_ActivityKernel10, name)                                  \
  X(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, kind)                                   \
  X(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, copyKind)                               \
  X(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, srcKind)                                \
  X(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, dstKind)                                \
  X(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, flags)                                  \
  X(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, bytes)                                  \
  X(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, start)                                  \
  X(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, end)                                    \
  X(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, deviceId)                               \
  X(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, contextId)                              \
  X(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, streamId)                               \
  X(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, correlationId)                          \
  X(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, graphNodeId)                            \
  X(CUpti_ActivityMemcpyPtoP4, CUpti_ActivityMemcpyPtoP4, kind)                           \
  X(CUpti_ActivityMemcpyPtoP4, CUpti_ActivityMemcpyPtoP4, copyKind)                       \
  X(CUpti_ActivityMemcpyPtoP4, CUpti_ActivityMemcpyPtoP4, srcKind)                        \
  X(CUpti_ActivityMemcpyPtoP4, CUpti_ActivityMemcpyPtoP4, dstKind)                        \
  X(CUpti_ActivityMemcpyPtoP4, CUpti_ActivityMemcpyPtoP4, flags)                          \
  X(CUpti_ActivityMemcpyPtoP4, CUpti_ActivityMemcpyPtoP4, bytes)                          \
  X(CUpti_ActivityMemcpyPtoP4, CUpti_ActivityMemcpyPtoP4, start)                          \
  X(CUpti_ActivityMemcpyPtoP4, CUpti_ActivityMemcpyPtoP4, end)                            \
  X(CUpti_ActivityMemcpyPtoP4, CUpti_ActivityMemcpyPtoP4, deviceId)                       \
  X(CUpti_ActivityMemcpyPtoP4, CUpti_ActivityMemcpyPtoP4, contextId)                      \
  X(CUpti_ActivityMemcpyPtoP4, CUpti_ActivityMemcpyPtoP4, streamId)                       \
  X(CUpti_ActivityMemcpyPtoP4, CUpti_ActivityMemcpyPtoP4, correlationId)                  \
  X(CUpti_ActivityMemset4, CUpti_ActivityMemset4, kind)                                   \
  X(CUpti_ActivityMemset4, CUpti_ActivityMemset4, bytes)                                  \
  X(CUpti_ActivityMemset4, CUpti_ActivityMemset4, start)                                  \
  X(CUpti_ActivityMemset4, CUpti_ActivityMemset4, end)                                    \
  X(CUpti_ActivityMemset4, CUpti_ActivityMemset4, correlationId)                          \
  X(CUpti_ActivityMemset4, CUpti_ActivityMemset4, graphNodeId)                            \
  X(CUpti_ActivityMemset4, CUpti_ActivityMemset4, deviceId)                               \
  X(CUpti_ActivityMemset4, CUpti_ActivityMemset4, streamId)                               \
  X(CUpti_ActivityMemset4, CUpti_ActivityMemset4, contextId)                              \
  X(CUpti_ActivityMemset4, CUpti_ActivityMemset4, memoryKind)                             \
  X(CUpti_ActivityMemset4, CUpti_ActivityMemset4, flags)                                  \
  X(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, kind)                  \
  X(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, type)                  \
  X(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, start)                 \
  X(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, end)                   \
  X(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, correlationId)         \
  X(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, contextId)             \
  X(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, streamId)              \
  X(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, cudaEventId)           \
  X(CUpti_ActivityMemory3, CUpti_ActivityMemory4, kind)                                   \
  X(CUpti_ActivityMemory3, CUpti_ActivityMemory4, memoryOperationType)                    \
  X(CUpti_ActivityMemory3, CUpti_ActivityMemory4, memoryKind)                             \
  X(CUpti_ActivityMemory3, CUpti_ActivityMemory4, correlationId)                          \
  X(CUpti_ActivityMemory3, CUpti_ActivityMemory4, address)                                \
  X(CUpti_ActivityMemory3, CUpti_ActivityMemory4, bytes)                                  \
  X(CUpti_ActivityMemory3, CUpti_ActivityMemory4, timestamp)                              \
  X(CUpti_ActivityMemory3, CUpti_ActivityMemory4, deviceId)                               \
  X(CUpti_ActivityMemory3, CUpti_ActivityMemory4, contextId)                              \
  X(CUpti_ActivityMemory3, CUpti_ActivityMemory4, streamId)

#endif  // GPUSTALL_AGENT_CUPTI_ACTIVITY_LAYOUTS_H_
