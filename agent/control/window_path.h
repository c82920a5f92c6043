// window_path.h — the trace file name of an on-demand capture window.
//
// Every window is a complete trace of its own, named after the process's trace path (GS_OUTPUT
// expanded at activation) with the window's number before the extension:
//   /runs/host-r0-4242.gstrace  ->  /runs/host-r0-4242.window-1.gstrace, .window-2.gstrace, ...
// so that `ls`, gsrun's globbing and gsanalyze's folder mode see them as that process's traces.
// The file itself is still created with O_EXCL (CreateTraceFile): an existing name gets ".1",
// ".2" ... after it, never overwritten.
//
// Thread safety: pure function.
#ifndef GPUSTALL_AGENT_CONTROL_WINDOW_PATH_H_
#define GPUSTALL_AGENT_CONTROL_WINDOW_PATH_H_

#include <string>

namespace gs {
namespace control {

std::string WindowTracePath(const std::string& trace_path, int window);

}  // namespace control
}  // namespace gs

#endif  // GPUSTALL_AGENT_CONTROL_WINDOW_PATH_H_
