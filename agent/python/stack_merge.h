// stack_merge.h — interleave a native stack with the Python frames of the same capture, as
// py-spy --native does: each native _PyEval_EvalFrameDefault frame is replaced by the run of
// Python frames it was executing.
//
// Pure function over arrays (no Python, no symbols): the caller says which native frames are
// evaluation frames (PythonStackReader::IsEvalFramePc on PC-1 of caller frames) and which are
// interpreter plumbing to drop (optional: e.g. other libpython frames between two eval frames).
// Python frames carry their run boundaries (PythonFrameRef::ends_eval_run):
//   3.9/3.10 every frame is its own run; 3.11 is_entry; 3.12/3.13 the frame above a shim;
//   the outermost captured frame always ends a run.
//
// Mismatches (a frame being pushed or popped when a signal lands, a broken native unwind):
//   * one more eval frame than runs: the innermost eval frame has not pushed its Python frame
//     yet; it is kept as a native frame and the runs map to the older eval frames;
//   * more eval frames than that: extra (outermost) eval frames are kept as native frames;
//   * more runs than eval frames: the remaining Python frames are appended at the outer end.
//
// Thread safety: pure; reentrant.
#ifndef GPUSTALL_AGENT_PYTHON_STACK_MERGE_H_
#define GPUSTALL_AGENT_PYTHON_STACK_MERGE_H_

#include <cstddef>
#include <cstdint>

#include "agent/python/python_stacks.h"

namespace gs {

enum class NativeFrameKind : uint8_t {
  kNative = 0,       // kept as is
  kEvalFrame = 1,    // _PyEval_EvalFrameDefault: replaced by Python frames
  kInterpreter = 2,  // interpreter plumbing: dropped from the merged stack
};

struct MergedFrame {
  bool is_python;
  uint32_t index;  // into the native array or the Python array
};

// Both inputs innermost first. Writes at most `capacity` frames, innermost first; returns the
// number written.
size_t MergeNativeAndPythonFrames(const NativeFrameKind* native, size_t native_count,
                                  const PythonFrameRef* python, size_t python_count,
                                  MergedFrame* out, size_t capacity);

}  // namespace gs

#endif  // GPUSTALL_AGENT_PYTHON_STACK_MERGE_H_
