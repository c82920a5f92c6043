// python_frames_test.cc — the agent core's side of Python stacks that needs no interpreter: the
// ring record layout (Python frames after the PCs, their count implied by the size), the frame
// keys of merged stacks, and a non-Python process recording exactly what it did before.
// (Python frames from real interpreters: tests/e2e/python_stacks_test.cc.)
#include <cstring>
#include <string>

#include "agent/python/python_stacks.h"
#include "agent/record/ring_pool.h"
#include "agent/record/ring_recorder.h"
#include "agent/stacks/stack_capture.h"
#include "agent/stacks/stack_table.h"
#include "gtest/gtest.h"

namespace gs {
namespace {

TEST(PythonFramesTest, ViewFindsPythonFramesAfterThePcs) {
  alignas(8) uint8_t record[sizeof(RingRecordHeader) + sizeof(ApiCallEvent) + 5 * 8] = {};
  auto* header = reinterpret_cast<RingRecordHeader*>(record);
  header->size = sizeof(record);
  header->type = kRingApiCall;
  header->flags = kRingFlagPythonTruncated;
  header->count = 3;
  uint8_t* body = record + sizeof(RingRecordHeader) + sizeof(ApiCallEvent);
  const uint64_t pcs[3] = {0x401000, 0x402000, 0x403000};
  std::memcpy(body, pcs, sizeof(pcs));
  PythonFrameRef py[2] = {};
  py[0].code_id = 7;
  py[0].addrq = 42;
  py[1].code_id = 9;
  py[1].ends_eval_run = 1;
  py[1].addrq = -1;
  std::memcpy(body + sizeof(pcs), py, sizeof(py));

  const ApiCallView v = RingRecorder::View(*header);
  ASSERT_EQ(v.pc_count, 3);
  EXPECT_EQ(v.pcs[2], 0x403000u);
  EXPECT_FALSE(v.truncated);
  ASSERT_EQ(v.python_count, 2);
  EXPECT_TRUE(v.python_truncated);
  EXPECT_EQ(v.python[0].code_id, 7u);
  EXPECT_EQ(v.python[0].addrq, 42);
  EXPECT_EQ(v.python[1].code_id, 9u);
  EXPECT_EQ(v.python[1].ends_eval_run, 1u);
  EXPECT_EQ(v.python[1].addrq, -1);

  // Without Python frames the record is what it always was.
  header->size = sizeof(RingRecordHeader) + sizeof(ApiCallEvent) + 3 * 8;
  header->flags = kRingFlagStackTruncated;
  const ApiCallView native = RingRecorder::View(*header);
  EXPECT_EQ(native.python_count, 0);
  EXPECT_FALSE(native.python_truncated);
  EXPECT_TRUE(native.truncated);
}

TEST(PythonFramesTest, FrameKeysKeepPythonAndNativeApart) {
  const uint64_t key = PythonFrameKey(0x7fffffffu, -2);
  EXPECT_TRUE(IsPythonFrameKey(key));
  EXPECT_EQ(PythonFrameKeyCodeId(key), 0x7fffffffu);
  EXPECT_EQ(PythonFrameKeyAddrq(key), -2);
  const uint64_t small = PythonFrameKey(1, 0);
  EXPECT_TRUE(IsPythonFrameKey(small));
  EXPECT_EQ(PythonFrameKeyCodeId(small), 1u);
  EXPECT_EQ(PythonFrameKeyAddrq(small), 0);
  // Any user-space return address (x86-64: below 2^47) is a native key.
  EXPECT_FALSE(IsPythonFrameKey(0x7fffffffffffull));

  // One (code, instruction) pair is one frame; the same offset in another code is another.
  StackTable table;
  bool is_new = false;
  const uint32_t a = table.InternFrame(PythonFrameKey(3, 10), &is_new);
  EXPECT_TRUE(is_new);
  EXPECT_EQ(table.InternFrame(PythonFrameKey(3, 10), &is_new), a);
  EXPECT_FALSE(is_new);
  EXPECT_NE(table.InternFrame(PythonFrameKey(4, 10), &is_new), a);
  EXPECT_NE(table.InternFrame(0x400000 + 10, &is_new), a);
}

__attribute__((noinline)) void RecordOne(RingRecorder& recorder) {
  ApiCallEvent e{};
  e.api_id = 1;
  recorder.RecordApiCall(e, true, 0);
  __asm__ volatile("" ::: "memory");
}

// This test binary is not CPython: the reader activates to kNotPython, silently, and records
// carry exactly the native stack they carry without a reader.
TEST(PythonFramesTest, NotPythonProcessRecordsNoPythonFrames) {
  static PythonStackReader reader;  // never destroyed, like the agent's
  testing::internal::CaptureStderr();
  EXPECT_EQ(reader.Activate(), PythonStacksState::kNotPython);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_FALSE(reader.enabled());

  for (StackMode mode : {StackMode::kUnwind, StackMode::kFramePointer}) {
    RingPool pool;
    ASSERT_TRUE(pool.Init(64 * 1024));
    StackCapturer capturer;
    std::string note;
    capturer.Init(mode, &note);
    RingRecorder with_reader(&pool, &capturer, 16, 16, &reader);
    RecordOne(with_reader);
    int seen = 0;
    pool.ring(0).ring.Drain([&](const RingRecordHeader& h) {
      const ApiCallView v = RingRecorder::View(h);
      EXPECT_GT(v.pc_count, 0);
      EXPECT_EQ(v.python_count, 0);
      EXPECT_EQ(h.size, sizeof(RingRecordHeader) + sizeof(ApiCallEvent) + 8u * static_cast<size_t>(v.pc_count));
      ++seen;
    });
    EXPECT_EQ(seen, 1);
  }
}

}  // namespace
}  // namespace gs
