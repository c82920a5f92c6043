// site_frame.h — which frame of a host stack names the place in the user's code: the first frame,
// from the leaf, that is not machinery between that code and the GPU (the CUDA runtime and
// libraries, the agent, language glue, installed packages, the C runtime). The program's own
// file (FrameInfo::main_program: its script or executable) is the user's code wherever it lives.
// A stack with no frame of the user's is shown by its innermost Python frame, else its innermost
// named native frame, and never by the process's or a thread's entry frames (_start,
// __libc_start_main, start_thread, clone) when anything else is there. Reports, summaries and
// exports name a stack or a call site by this frame.
//
// Pure functions; no thread safety concerns.
#ifndef GPUSTALL_ANALYZER_CLASSIFY_SITE_FRAME_H_
#define GPUSTALL_ANALYZER_CLASSIFY_SITE_FRAME_H_

#include <cstddef>
#include <vector>

#include "analyzer/model/trace_tables.h"

namespace gs::analyzer {

// The frame a site is shown by (the rules above). Empty when `frames` is.
FrameInfo SiteFrame(const std::vector<FrameInfo>& frames);
// Index of SiteFrame's frame in `frames` (0 when `frames` is empty or holds entry frames only).
size_t SiteFrameIndex(const std::vector<FrameInfo>& frames);
// How many callers a reported site keeps (resume, after-sync and graph capture sites).
inline constexpr size_t kSiteCallers = 4;
// A call site as reports name it: SiteFrame's frame into *frame (left as it is when `frames` is
// empty) and up to `max_callers` of the frames that called it, innermost first, into *callers
// ("after sync at cudaMemcpy in Runtime.call ← Runtime.memcpy ← read_loss" names the user's
// function even behind a thin wrapper).
void SiteWithCallers(const std::vector<FrameInfo>& frames, size_t max_callers, FrameInfo* frame,
                     std::vector<FrameInfo>* callers);
// True for frames that are the machinery between the user's code and the GPU: the CUDA runtime
// and libraries, the agent, language glue (libffi, ctypes, the interpreter's own native frames),
// installed packages (site-packages, dist-packages: Python files and native extension modules
// such as libtorch_cuda.so), Python's standard library, and the C and C++ runtime (libc, the
// loader, libstdc++, libgcc_s) with the entry frames. Never for a frame of the program itself.
bool IsLibraryFrame(const FrameInfo& frame);
// A frame of Python code: a file and no native module.
bool IsPythonFrame(const FrameInfo& frame);
// A native frame of the Python interpreter itself: libpython3.x.so, or the python executable
// (python, python3.12, python3.13t ...) where the interpreter is linked into it.
bool IsInterpreterFrame(const FrameInfo& frame);
// The C and C++ runtime (libc, the loader, libstdc++, ...) and the process's and threads' entry
// frames (_start, __libc_start_main, start_thread, clone).
bool IsProcessRuntimeFrame(const FrameInfo& frame);

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_CLASSIFY_SITE_FRAME_H_
