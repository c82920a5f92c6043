// PythonStackReader inside a fake "CPython": this executable exports the symbols detection
// looks for (PyGILState_GetThisThreadState, Py_Version, PyCode_Type, ..., _PyRuntime), so tests can
// set any version, build flavour or layout and hand the walker damaged frame chains that a real
// interpreter would not produce on demand.
#include "agent/python/python_stacks.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "agent/python/fault_guard.h"
#include "agent/python/python_symbolizer.h"
#include "agent/python/tests/fake_python.h"
#include "agent/python/tests/skip_under_tsan.h"

#define FAKE_EXPORT __attribute__((visibility("default")))

namespace {
void* g_fake_tstate = nullptr;
}

extern "C" {
FAKE_EXPORT void* PyGILState_GetThisThreadState() { return g_fake_tstate; }
FAKE_EXPORT unsigned long Py_Version = 0;
alignas(64) FAKE_EXPORT unsigned char PyCode_Type[512] = {};
alignas(64) FAKE_EXPORT unsigned char PyBytes_Type[512] = {};
alignas(64) FAKE_EXPORT unsigned char PyUnicode_Type[512] = {};
alignas(64) FAKE_EXPORT unsigned char _PyRuntime[4096] = {};
}

namespace gs {
namespace {

// Same layout as CPython's PyMemberDef.
struct FakeMemberDef {
  const char* name;
  int type;
  ssize_t offset;
  int flags;
  const char* doc;
};
static_assert(sizeof(FakeMemberDef) == 40 && offsetof(FakeMemberDef, offset) == 16, "PyMemberDef");

std::vector<std::string>* g_log = nullptr;
void CollectLog(const char* line) { g_log->push_back(line); }

template <typename T>
void Put(void* base, int offset, T value) {
  std::memcpy(static_cast<char*>(base) + offset, &value, sizeof value);
}

class FakeRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_log = &log_;
    g_fake_tstate = nullptr;
    std::memset(_PyRuntime, 0, sizeof _PyRuntime);
    std::memset(PyCode_Type, 0, sizeof PyCode_Type);
    SetVersion(0x030C01F0);  // 3.12.1
    layout_ = *BuiltinPythonLayout(12);
    members_ = {{"co_filename", 0, layout_.code_filename, 0, nullptr},
                {"co_name", 0, layout_.code_name, 0, nullptr},
                {"co_firstlineno", 0, layout_.code_firstlineno, 0, nullptr},
                {"co_linetable", 0, layout_.code_linetable, 0, nullptr},
                {"co_qualname", 0, layout_.code_qualname, 0, nullptr},
                {nullptr, 0, 0, 0, nullptr}};
    Put<long>(PyCode_Type, layout_.type_basicsize, layout_.code_type_basicsize);
    Put<void*>(PyCode_Type, layout_.type_members, members_.data());
    types_.code = reinterpret_cast<uintptr_t>(PyCode_Type);
    types_.bytes = reinterpret_cast<uintptr_t>(PyBytes_Type);
    types_.unicode = reinterpret_cast<uintptr_t>(PyUnicode_Type);
    heap_.reset(new FakeHeap(layout_, types_));
  }
  void TearDown() override { g_fake_tstate = nullptr; }

  static void SetVersion(unsigned long hex) { Py_Version = hex; }

  PythonStacksState Activate(PythonStackReader* reader) {
    PythonStackReader::Options options;
    options.code_table_slots = 256;
    options.string_arena_bytes = 1 << 16;
    options.log = &CollectLog;
    return reader->Activate(options);
  }

  // A thread state for the calling thread whose cframe points at `*current` (3.12 layout).
  void MakeThreadState(bool right_thread = true) {
    tstate_ = heap_->Alloc(512);
    cframe_ = heap_->Alloc(64);
    Put<unsigned long>(reinterpret_cast<void*>(tstate_), layout_.ts_thread_id,
                       right_thread ? pthread_self() : pthread_self() + 1);
    Put<unsigned long>(reinterpret_cast<void*>(tstate_), layout_.ts_native_thread_id,
                       static_cast<unsigned long>(syscall(SYS_gettid)));
    Put<uintptr_t>(reinterpret_cast<void*>(tstate_), layout_.ts_frame, cframe_);
    g_fake_tstate = reinterpret_cast<void*>(tstate_);
  }
  void SetCurrentFrame(uintptr_t frame) {
    Put<uintptr_t>(reinterpret_cast<void*>(cframe_), layout_.cframe_current_frame, frame);
  }

  // A code object named `name` starting at `firstlineno`: its location table says
  // bytes [0,4) are on firstlineno + 1 and [4,6) on firstlineno + 2.
  uintptr_t Code(const char* name, int firstlineno) {
    std::u32string n(name, name + std::strlen(name));
    return heap_->Code(heap_->Str(U"/src/fake.py"), heap_->Str(n),
                       heap_->Bytes({0xE9, 0x02, 0xD8, 0x00, 0x00}), firstlineno);
  }
  // A _PyInterpreterFrame (3.12) running `code` at byte offset `addrq`.
  uintptr_t Frame(uintptr_t code, int addrq, int owner = 0, uintptr_t previous = 0) {
    const uintptr_t f = heap_->Alloc(128);
    void* p = reinterpret_cast<void*>(f);
    Put<uintptr_t>(p, layout_.frame_code, code);
    Put<uintptr_t>(p, layout_.frame_previous, previous);
    Put<uintptr_t>(p, layout_.frame_instr, code + layout_.code_adaptive + addrq);
    Put<uint8_t>(p, layout_.frame_owner, static_cast<uint8_t>(owner));
    return f;
  }
  static void SetPrevious(uintptr_t frame, uintptr_t previous) {
    Put<uintptr_t>(reinterpret_cast<void*>(frame), BuiltinPythonLayout(12)->frame_previous,
                   previous);
  }

  // inner (addrq 2) -> shim -> middle (addrq 4) -> outer (addrq 0) -> entry shim; returns
  // inner. The entry shim is the bottom of a 3.12 thread's chain (python_layout.h, "Bottom").
  uintptr_t GoodChain() {
    entry_shim_ = Frame(types_.code, 0, /*owner=*/3, 0);
    outer_ = Frame(Code("outer", 10), 0, 0, entry_shim_);
    middle_ = Frame(Code("Model.middle", 20), 4, 0, outer_);
    shim_ = Frame(types_.code, 0, /*owner=*/3, middle_);
    inner_ = Frame(Code("inner", 30), 2, 0, shim_);
    return inner_;
  }

  // Activates and validates on a good chain, so later captures run the hot path.
  void ActivateValidated(PythonStackReader* reader) {
    ASSERT_EQ(Activate(reader), PythonStacksState::kPendingThreadCheck);
    MakeThreadState();
    SetCurrentFrame(GoodChain());
    PythonFrameRef frames[8];
    ASSERT_EQ(reader->Capture(frames, 8), 3);
    ASSERT_EQ(reader->state(), PythonStacksState::kActive);
  }

  std::vector<std::string> log_;
  PythonLayout layout_;
  PyTypePointers types_;
  std::vector<FakeMemberDef> members_;
  std::unique_ptr<FakeHeap> heap_;
  uintptr_t tstate_ = 0, cframe_ = 0, entry_shim_ = 0, outer_ = 0, middle_ = 0, shim_ = 0,
            inner_ = 0;
};

TEST_F(FakeRuntimeTest, UnsupportedVersionsDisableWithOneMessage) {
  for (unsigned long hex : {0x030E00F0ul, 0x030800F0ul}) {
    SetVersion(hex);
    log_.clear();
    PythonStackReader reader;
    EXPECT_EQ(Activate(&reader), PythonStacksState::kUnsupported);
    EXPECT_EQ(Activate(&reader), PythonStacksState::kUnsupported);
    ASSERT_EQ(log_.size(), 1u);
    EXPECT_NE(log_[0].find(hex == 0x030E00F0ul ? "3.14" : "3.8"), std::string::npos) << log_[0];
    PythonFrameRef frames[4];
    EXPECT_EQ(reader.Capture(frames, 4), 0);
  }
}

TEST_F(FakeRuntimeTest, FreeThreadedBuildIsSkippedWithOneMessage) {
  SetVersion(0x030D00F0);
  std::memcpy(_PyRuntime, "xdebugpy", 8);
  Put<uint64_t>(_PyRuntime, 8, 0x030D00F0);
  Put<uint64_t>(_PyRuntime, 16, 1);  // free_threaded
  PythonStackReader reader;
  EXPECT_EQ(Activate(&reader), PythonStacksState::kFreeThreaded);
  EXPECT_EQ(Activate(&reader), PythonStacksState::kFreeThreaded);
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_NE(log_[0].find("free-threaded"), std::string::npos) << log_[0];
}

TEST_F(FakeRuntimeTest, DebugOffsetsWithoutCookieAreRejected) {
  SetVersion(0x030D00F0);
  PythonStackReader reader;
  EXPECT_EQ(Activate(&reader), PythonStacksState::kLayoutMismatch);
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_NE(log_[0].find("xdebugpy"), std::string::npos) << log_[0];
}

TEST_F(FakeRuntimeTest, CodeTypeThatDisagreesWithTheTableIsRejected) {
  Put<long>(PyCode_Type, layout_.type_basicsize, 200);
  PythonStackReader reader;
  EXPECT_EQ(Activate(&reader), PythonStacksState::kLayoutMismatch);
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_NE(log_[0].find("tp_basicsize"), std::string::npos) << log_[0];
}

TEST_F(FakeRuntimeTest, MemberOffsetThatDisagreesIsRejected) {
  members_[4].offset = 136;  // co_qualname
  PythonStackReader reader;
  EXPECT_EQ(Activate(&reader), PythonStacksState::kLayoutMismatch);
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_NE(log_[0].find("co_qualname"), std::string::npos) << log_[0];
}

TEST_F(FakeRuntimeTest, ThreadStateOfAnotherThreadFailsValidation) {
  PythonStackReader reader;
  ASSERT_EQ(Activate(&reader), PythonStacksState::kPendingThreadCheck);
  PythonFrameRef frames[8];
  EXPECT_EQ(reader.Capture(frames, 8), 0);  // no thread state yet: still pending
  EXPECT_EQ(reader.state(), PythonStacksState::kPendingThreadCheck);
  MakeThreadState(/*right_thread=*/false);
  SetCurrentFrame(GoodChain());
  EXPECT_EQ(reader.Capture(frames, 8), 0);
  EXPECT_EQ(reader.state(), PythonStacksState::kLayoutMismatch);
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_EQ(reader.Capture(frames, 8), 0);
  EXPECT_EQ(log_.size(), 1u);
}

TEST_F(FakeRuntimeTest, ThreadWithoutFramesLeavesValidationPending) {
  PythonStackReader reader;
  ASSERT_EQ(Activate(&reader), PythonStacksState::kPendingThreadCheck);
  MakeThreadState();
  PythonFrameRef frames[8];
  EXPECT_EQ(reader.Capture(frames, 8), 0);
  EXPECT_EQ(reader.state(), PythonStacksState::kPendingThreadCheck);
  EXPECT_TRUE(log_.empty());
}

TEST_F(FakeRuntimeTest, GoodChainSkipsShimsAndMarksRuns) {
  PythonStackReader reader;
  ActivateValidated(&reader);
  PythonFrameRef frames[8];
  bool truncated = true;
  ASSERT_EQ(reader.Capture(frames, 8, &truncated), 3);
  EXPECT_FALSE(truncated);
  EXPECT_EQ(frames[0].ends_eval_run, 1u);  // its previous is the shim
  EXPECT_EQ(frames[1].ends_eval_run, 0u);
  EXPECT_EQ(frames[2].ends_eval_run, 1u);  // outermost
  PythonSymbolizer symbolizer(reader.code_table());
  PythonSymbol s;
  ASSERT_TRUE(symbolizer.Symbolize(frames[0], &s));
  EXPECT_EQ(s.function, "inner");
  EXPECT_EQ(s.line, 31);
  ASSERT_TRUE(symbolizer.Symbolize(frames[1], &s));
  EXPECT_EQ(s.function, "Model.middle");
  EXPECT_EQ(s.filename, "/src/fake.py");
  EXPECT_EQ(s.line, 22);
  ASSERT_TRUE(symbolizer.Symbolize(frames[2], &s));
  EXPECT_EQ(s.function, "outer");
  EXPECT_EQ(s.line, 11);
  EXPECT_TRUE(log_.empty());
}

TEST_F(FakeRuntimeTest, PreviousPointingAtUnmappedMemoryGivesAShorterStack) {
  GS_SKIP_UNDER_TSAN();
  PythonStackReader reader;
  ActivateValidated(&reader);
  void* hole = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(hole, MAP_FAILED);
  SetPrevious(middle_, reinterpret_cast<uintptr_t>(hole));
  const uint64_t faults = reader.stats().faults;
  PythonFrameRef frames[8];
  bool truncated = false;
  EXPECT_EQ(reader.Capture(frames, 8, &truncated), 2);
  EXPECT_TRUE(truncated);
  EXPECT_EQ(reader.stats().faults, faults + 1);
  // Garbage that is not even a plausible pointer ends the walk without a fault.
  SetPrevious(middle_, 0x1234567);
  EXPECT_EQ(reader.Capture(frames, 8, &truncated), 2);
  EXPECT_TRUE(truncated);
  EXPECT_EQ(reader.stats().faults, faults + 1);
  munmap(hole, 4096);
}

TEST_F(FakeRuntimeTest, AChainThatEndsAboveItsBottomGivesNoFrames) {
  PythonStackReader reader;
  ActivateValidated(&reader);
  // What a read sees just after a generator's yield set its frame's previous to NULL, or before
  // a new frame's previous is written: a chain that ends (NULL) at a frame that is no bottom.
  SetPrevious(middle_, 0);
  PythonFrameRef frames[8];
  bool truncated = true;
  EXPECT_EQ(reader.Capture(frames, 8, &truncated), 0);
  EXPECT_FALSE(truncated);
  EXPECT_EQ(reader.stats().torn, 1u);
  EXPECT_EQ(reader.stats().truncated, 0u);
  // From another thread (the sampler's read) alike.
  uint64_t tid = static_cast<uint64_t>(syscall(SYS_gettid));
  std::thread other([&] { EXPECT_EQ(reader.CaptureThread(tstate_, tid, frames, 8), 0); });
  other.join();
  EXPECT_EQ(reader.stats().torn, 2u);
  // Mended, the same chain reads whole again.
  SetPrevious(middle_, outer_);
  EXPECT_EQ(reader.Capture(frames, 8, &truncated), 3);
  EXPECT_EQ(reader.stats().torn, 2u);
}

TEST_F(FakeRuntimeTest, ATornChainAtTheLayoutCheckLeavesItPending) {
  PythonStackReader reader;
  ASSERT_EQ(Activate(&reader), PythonStacksState::kPendingThreadCheck);
  MakeThreadState();
  SetCurrentFrame(GoodChain());
  SetPrevious(middle_, 0);
  PythonFrameRef frames[8];
  EXPECT_EQ(reader.Capture(frames, 8), 0);
  EXPECT_EQ(reader.state(), PythonStacksState::kPendingThreadCheck);
  EXPECT_TRUE(log_.empty());
  SetPrevious(middle_, outer_);
  EXPECT_EQ(reader.Capture(frames, 8), 3);
  EXPECT_EQ(reader.state(), PythonStacksState::kActive);
}

TEST_F(FakeRuntimeTest, ALayoutWhoseChainsNeverReachTheirBottomIsRejected) {
  PythonStackReader reader;
  ASSERT_EQ(Activate(&reader), PythonStacksState::kPendingThreadCheck);
  MakeThreadState();
  SetCurrentFrame(GoodChain());
  SetPrevious(outer_, 0);  // as if the shim's owner value were not where the layout says
  PythonFrameRef frames[8];
  for (int i = 0; i < 200 && reader.state() == PythonStacksState::kPendingThreadCheck; ++i) {
    EXPECT_EQ(reader.Capture(frames, 8), 0);
  }
  EXPECT_EQ(reader.state(), PythonStacksState::kLayoutMismatch);
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_NE(log_[0].find("layout check"), std::string::npos) << log_[0];
}

TEST_F(FakeRuntimeTest, CycleInTheChainTerminates) {
  PythonStackReader reader;
  ActivateValidated(&reader);
  SetPrevious(outer_, shim_);  // outer -> shim -> middle -> outer -> ...
  PythonFrameRef frames[64];
  bool truncated = false;
  const int n = reader.Capture(frames, 64, &truncated);
  EXPECT_TRUE(truncated);
  EXPECT_GE(n, 3);
  EXPECT_LT(n, 64);
}

TEST_F(FakeRuntimeTest, FrameWhoseCodeIsNotACodeObjectEndsTheStack) {
  PythonStackReader reader;
  ActivateValidated(&reader);
  const uintptr_t not_code = heap_->Bytes({1, 2, 3});
  Put<uintptr_t>(reinterpret_cast<void*>(middle_), layout_.frame_code, not_code);
  PythonFrameRef frames[8];
  bool truncated = false;
  EXPECT_EQ(reader.Capture(frames, 8, &truncated), 1);
  EXPECT_TRUE(truncated);
}

TEST_F(FakeRuntimeTest, InstructionPointerOutsideTheCodeEndsTheStack) {
  PythonStackReader reader;
  ActivateValidated(&reader);
  const uintptr_t code = *reinterpret_cast<uintptr_t*>(middle_ + layout_.frame_code);
  Put<uintptr_t>(reinterpret_cast<void*>(middle_), layout_.frame_instr,
                 code + layout_.code_adaptive + 4096);
  PythonFrameRef frames[8];
  bool truncated = false;
  EXPECT_EQ(reader.Capture(frames, 8, &truncated), 1);
  EXPECT_TRUE(truncated);
}

TEST_F(FakeRuntimeTest, NotStartedFramesAreSkippedLikeCPythonDoes) {
  PythonStackReader reader;
  ActivateValidated(&reader);
  const uintptr_t code = *reinterpret_cast<uintptr_t*>(middle_ + layout_.frame_code);
  Put<uintptr_t>(reinterpret_cast<void*>(middle_), layout_.frame_instr,
                 code + layout_.code_adaptive - 2);  // prev_instr before the first instruction
  PythonFrameRef frames[8];
  EXPECT_EQ(reader.Capture(frames, 8), 2);
  // A generator's frame is complete even before its first instruction.
  Put<uint8_t>(reinterpret_cast<void*>(middle_), layout_.frame_owner, 1);
  EXPECT_EQ(reader.Capture(frames, 8), 3);
  EXPECT_EQ(frames[1].addrq, -2);
}

TEST_F(FakeRuntimeTest, StackOfExactlyTheLimitIsComplete) {
  PythonStackReader reader;
  ActivateValidated(&reader);
  PythonFrameRef frames[3];
  bool truncated = true;
  EXPECT_EQ(reader.Capture(frames, 3, &truncated), 3);
  EXPECT_FALSE(truncated);
  EXPECT_EQ(frames[2].ends_eval_run, 1u);
  PythonFrameRef fewer[2];
  EXPECT_EQ(reader.Capture(fewer, 2, &truncated), 2);
  EXPECT_TRUE(truncated);
}

TEST_F(FakeRuntimeTest, DeepStacksStopAtTheCallersLimit) {
  PythonStackReader reader;
  ActivateValidated(&reader);
  const uintptr_t code = Code("rec", 1);
  uintptr_t frame = 0;
  for (int i = 0; i < 100; ++i) frame = Frame(code, 2, 0, frame);
  SetCurrentFrame(frame);
  PythonFrameRef frames[10];
  bool truncated = false;
  EXPECT_EQ(reader.Capture(frames, 10, &truncated), 10);
  EXPECT_TRUE(truncated);
  EXPECT_EQ(frames[0].code_id, frames[9].code_id);
}

}  // namespace
}  // namespace gs
