// Merging native and Python frames, without Python: frames and markers built by hand.
#include "agent/python/stack_merge.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gs {
namespace {

using K = NativeFrameKind;

PythonFrameRef Py(bool ends_run) {
  PythonFrameRef f;
  f.code_id = 1;
  f.ends_eval_run = ends_run ? 1 : 0;
  f.addrq = 0;
  return f;
}

// "N<i>" for native frame i, "P<i>" for Python frame i.
std::string Merge(const std::vector<K>& native, const std::vector<PythonFrameRef>& py,
                  size_t capacity = 64) {
  std::vector<MergedFrame> out(capacity);
  const size_t n = MergeNativeAndPythonFrames(native.data(), native.size(), py.data(), py.size(),
                                              out.data(), capacity);
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += (out[i].is_python ? "P" : "N") + std::to_string(out[i].index) + " ";
  }
  return s;
}

TEST(StackMergeTest, EachEvalFrameBecomesItsRun311Style) {
  // Innermost first: hook, eval(runs P0 P1), C code, eval(runs P2), main.
  EXPECT_EQ(Merge({K::kNative, K::kEvalFrame, K::kNative, K::kEvalFrame, K::kNative},
                  {Py(false), Py(true), Py(true)}),
            "N0 P0 P1 N2 P2 N4 ");
}

TEST(StackMergeTest, OneEvalFramePerPythonFrame310Style) {
  EXPECT_EQ(Merge({K::kNative, K::kEvalFrame, K::kNative, K::kEvalFrame, K::kEvalFrame, K::kNative},
                  {Py(true), Py(true), Py(true)}),
            "N0 P0 N2 P1 P2 N5 ");
}

TEST(StackMergeTest, InterpreterPlumbingIsDropped) {
  EXPECT_EQ(
      Merge({K::kNative, K::kInterpreter, K::kEvalFrame, K::kInterpreter, K::kNative}, {Py(true)}),
      "N0 P0 N4 ");
}

TEST(StackMergeTest, InnermostEvalWithoutFramesYetStaysNative) {
  // A signal landed while the innermost eval frame was entering: one eval frame more than runs.
  EXPECT_EQ(Merge({K::kEvalFrame, K::kNative, K::kEvalFrame, K::kNative}, {Py(true)}),
            "N0 N1 P0 N3 ");
}

TEST(StackMergeTest, PythonFramesBeyondABrokenUnwindAreAppended) {
  EXPECT_EQ(Merge({K::kNative, K::kEvalFrame}, {Py(true), Py(true), Py(true)}), "N0 P0 P1 P2 ");
}

TEST(StackMergeTest, UnmarkedOutermostFrameStillEndsARun) {
  EXPECT_EQ(Merge({K::kEvalFrame, K::kNative, K::kEvalFrame}, {Py(true), Py(false)}), "P0 N1 P1 ");
}

TEST(StackMergeTest, NoPythonFramesKeepsTheNativeStack) {
  EXPECT_EQ(Merge({K::kNative, K::kEvalFrame, K::kNative}, {}), "N0 N1 N2 ");
}

TEST(StackMergeTest, CapacityIsHonoured) {
  EXPECT_EQ(Merge({K::kNative, K::kEvalFrame, K::kNative}, {Py(false), Py(true)}, 2), "N0 P0 ");
}

}  // namespace
}  // namespace gs
