// stack_view.h — a host stack as the reports show it, and the identity stacks aggregate by.
//
// A sampled stack holds every native frame the unwinder walked. Two things in it are noise to the
// reader and split one piece of code into many stacks:
//
//  * In a Python program, the interpreter's own native frames (libpython, or the python executable)
//    sit above the outermost Python frame (_start <- __libc_start_main <- Py_BytesMain <- ... <-
//    PyEval_EvalCode) and between Python frames (main (x.py:60) <- _PyObject_MakeTpCall <- ...).
//    A thread blocked in the kernel may be unwound only as far as `<module>`, so the same code
//    would otherwise have two roots. ViewStack folds those frames away: the interpreter's frames
//    go wherever they are (under the innermost Python frame too: the eval loop, PyNumber_Multiply
//    are time in that Python line, as a Python profiler shows it), and above the outermost Python
//    frame the C runtime's and the entry frames (_start, __libc_start_main, start_thread, clone).
//    Every other native frame stays where it is: a C extension, libjpeg, torch, ctypes, a libc
//    sleep under the Python frames; the program embedding Python, or a native library's thread
//    calling into Python (torch's autograd engine), above them.
//    A program run with `python -m pkg.mod` has runpy's Python frames (_run_module_as_main <-
//    _run_code, in "<frozen runpy>" or runpy.py) above its `<module>`; when they are the
//    outermost frames they go too, so that program is rooted at its main module's `<module>`.
//  * A library without symbols names each frame by its PC ("libjpeg.so.62+0x231e3"): one loop is
//    as many stacks as PCs sampled. ViewStack names such a frame "libjpeg.so.62+?", and a run of
//    them in one module (its internal calls) is one frame: one bucket per caller.
//
// Stacks then aggregate by function, not by line (FrameIdentity): a Python frame is its file and
// function, a native frame its module and function; the line stays as detail.
//
// Pure functions; no thread safety concerns.
#ifndef GPUSTALL_ANALYZER_CLASSIFY_STACK_VIEW_H_
#define GPUSTALL_ANALYZER_CLASSIFY_STACK_VIEW_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/model/trace_tables.h"

namespace gs::analyzer {

// `frames` (leaf first) with the folds above applied.
std::vector<FrameInfo> ViewStack(std::vector<FrameInfo> frames);

// What frames of one function share, whatever their line: "file\x1ffunction" for Python frames,
// "module\x1ffunction" for native ones (file, line and PC are detail).
std::string FrameIdentity(const FrameInfo& frame);
// A stack's identity: its frames' FrameIdentity in order. Stacks with equal identities are one
// stack in top stacks, trees and rank summaries.
std::string StackIdentity(const std::vector<FrameInfo>& frames);

// The frames a charge key (gap_classifier.h's ChargeKey) is shown by: the stack through ViewStack;
// "(no host call recorded)" for 0, "FUNCTION (no stack)" for a call recorded without a stack, and
// "stack#N (not in trace)" for a stack id the trace does not hold.
std::vector<FrameInfo> ChargeKeyFrames(const TraceTables& tables, uint64_t key);

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_CLASSIFY_STACK_VIEW_H_
