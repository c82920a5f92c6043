// trace_header.h — the TraceHeader that opens every trace file: schema and agent version, host,
// pid and job placement, command line, a realtime/boottime/monotonic clock snapshot, what is
// captured (stacks, Python, NVTX, capture mode) and every GS_* setting (proto/FORMAT.md).
#ifndef GPUSTALL_AGENT_CORE_TRACE_HEADER_H_
#define GPUSTALL_AGENT_CORE_TRACE_HEADER_H_

#include <string>

#include "agent/core/agent_parts.h"
#include "proto/gstrace.pb.h"

namespace gs {
namespace core {

// Built when a trace opens (activation, each on-demand window), on the opening thread. Takes the
// capture mode the recorder holds (RingRecorder::TakeCaptureMode). Allocates; reads /proc.
gpustall::trace::TraceHeader BuildTraceHeader(const AgentParts& parts, const std::string& host);

}  // namespace core
}  // namespace gs

#endif  // GPUSTALL_AGENT_CORE_TRACE_HEADER_H_
