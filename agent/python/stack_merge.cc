// stack_merge.cc — see stack_merge.h.
#include "agent/python/stack_merge.h"

namespace gs {

size_t MergeNativeAndPythonFrames(const NativeFrameKind* native, size_t native_count,
                                  const PythonFrameRef* python, size_t python_count,
                                  MergedFrame* out, size_t capacity) {
  size_t evals = 0;
  for (size_t i = 0; i < native_count; ++i) {
    if (native[i] == NativeFrameKind::kEvalFrame) ++evals;
  }
  size_t runs = 0;
  for (size_t i = 0; i < python_count; ++i) {
    if (python[i].ends_eval_run || i + 1 == python_count) ++runs;
  }
  // The innermost eval frame owns no run yet (it is entering or leaving its Python frame).
  bool skip_innermost_eval = evals == runs + 1;

  size_t n = 0;
  size_t py = 0;
  auto emit = [&](bool is_python, size_t index) {
    if (n < capacity) out[n++] = MergedFrame{is_python, static_cast<uint32_t>(index)};
  };
  for (size_t i = 0; i < native_count; ++i) {
    switch (native[i]) {
      case NativeFrameKind::kInterpreter:
        break;
      case NativeFrameKind::kNative:
        emit(false, i);
        break;
      case NativeFrameKind::kEvalFrame:
        if (skip_innermost_eval || py >= python_count) {
          skip_innermost_eval = false;
          emit(false, i);
          break;
        }
        while (py < python_count) {
          const bool last_of_run = python[py].ends_eval_run;
          emit(true, py++);
          if (last_of_run) break;
        }
        break;
    }
  }
  while (py < python_count) emit(true, py++);
  return n;
}

}  // namespace gs
