// site_frame.h — which frame of a host stack names the place in the user's code: the first frame,
// from the leaf, that is not machinery between that code and the GPU (the CUDA runtime and
// libraries, the agent, language glue, installed packages). Reports, summaries and exports name a
// stack or a call site by this frame.
//
// Pure functions; no thread safety concerns.
#ifndef GPUSTALL_ANALYZER_CLASSIFY_SITE_FRAME_H_
#define GPUSTALL_ANALYZER_CLASSIFY_SITE_FRAME_H_

#include <cstddef>
#include <vector>

#include "analyzer/model/trace_tables.h"

namespace gs::analyzer {

// The frame a site is shown by: the first frame (from the leaf) outside the CUDA runtime, CUPTI,
// the driver and the agent; the leaf when all are. Empty when `frames` is.
FrameInfo SiteFrame(const std::vector<FrameInfo>& frames);
// Index of SiteFrame's frame in `frames` (0 when every frame is library code, or none).
size_t SiteFrameIndex(const std::vector<FrameInfo>& frames);
// True for frames that are the machinery between the user's code and the GPU: the CUDA runtime
// and libraries, the agent, language glue (libffi, ctypes, the interpreter's own native frames),
// installed packages (site-packages, dist-packages: Python files and native extension modules
// such as libtorch_cuda.so) and Python's standard library.
bool IsLibraryFrame(const FrameInfo& frame);

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_CLASSIFY_SITE_FRAME_H_
