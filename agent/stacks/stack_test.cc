#include "agent/stacks/stack_capture.h"

#include <errno.h>

#include <string>
#include <thread>
#include <vector>

#include "agent/record/reused_stacks.h"
#include "agent/record/ring_pool.h"
#include "agent/record/ring_recorder.h"
#include "agent/stacks/stack_table.h"
#include "gtest/gtest.h"

namespace gs {
namespace {

struct Captured {
  std::vector<uint64_t> pcs;
  uint64_t return_into_level2 = 0;  // Level3's return address
  uint64_t return_into_level1 = 0;  // Level2's return address
};

__attribute__((noinline)) void Level3(const StackCapturer& capturer, uintptr_t lo, uintptr_t hi, uint64_t from_level2,
                                      Captured* out) {
  out->pcs.resize(16);
  out->return_into_level2 = reinterpret_cast<uint64_t>(__builtin_return_address(0));
  out->return_into_level1 = from_level2;
  const int n = capturer.Capture(out->pcs.data(), 16, 0, lo, hi);
  out->pcs.resize(static_cast<size_t>(n));
  __asm__ volatile("" ::: "memory");  // no tail call: keep this frame
}

__attribute__((noinline)) void Level2(const StackCapturer& capturer, uintptr_t lo, uintptr_t hi, Captured* out) {
  Level3(capturer, lo, hi, reinterpret_cast<uint64_t>(__builtin_return_address(0)), out);
  __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void Level1(const StackCapturer& capturer, uintptr_t lo, uintptr_t hi, Captured* out) {
  Level2(capturer, lo, hi, out);
  __asm__ volatile("" ::: "memory");
}

void ExpectCallerChain(StackMode mode) {
  StackCapturer capturer;
  std::string note;
  ASSERT_EQ(capturer.Init(mode, &note), mode) << note;
  uintptr_t lo = 0, hi = 0;
  ASSERT_TRUE(StackCapturer::CurrentThreadStackBounds(&lo, &hi));
  Captured c;
  Level1(capturer, lo, hi, &c);
  ASSERT_GE(c.pcs.size(), 3u);
  // pcs[0] is in Level3 (the call to Capture), then the return addresses into Level2, Level1.
  EXPECT_EQ(c.pcs[1], c.return_into_level2);
  EXPECT_EQ(c.pcs[2], c.return_into_level1);
}

TEST(StackTest, UnwindCapturesTheCallerChain) { ExpectCallerChain(StackMode::kUnwind); }
TEST(StackTest, FramePointerCapturesTheCallerChain) { ExpectCallerChain(StackMode::kFramePointer); }

TEST(StackTest, SkipDropsInnerFrames) {
  StackCapturer capturer;
  std::string note;
  capturer.Init(StackMode::kUnwind, &note);
  uint64_t all[16], skipped[16];
  const int n_all = capturer.Capture(all, 16, 0, 0, 0);
  const int n_skipped = capturer.Capture(skipped, 16, 1, 0, 0);
  ASSERT_GE(n_all, 3);
  EXPECT_EQ(n_skipped, n_all - 1);
  EXPECT_EQ(skipped[0], all[1]);
}

TEST(StackTest, DepthLimitIsRespected) {
  StackCapturer capturer;
  std::string note;
  capturer.Init(StackMode::kUnwind, &note);
  uint64_t pcs[2];
  EXPECT_EQ(capturer.Capture(pcs, 2, 0, 0, 0), 2);
  EXPECT_EQ(capturer.Capture(pcs, 0, 0, 0, 0), 0);
}

TEST(StackTest, FramePointerWalkStaysInsideTheStackBounds) {
  uintptr_t lo = 0, hi = 0;
  ASSERT_TRUE(StackCapturer::CurrentThreadStackBounds(&lo, &hi));
  uint64_t pcs[64];
  // Unknown bounds: no guessing, no frames.
  EXPECT_EQ(StackCapturer::WalkFramePointers(pcs, 64, 0, 0, 0), 0);
  // A "stack" that ends just above our frame: the walk stops instead of reading past it.
  const uintptr_t here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  EXPECT_LE(StackCapturer::WalkFramePointers(pcs, 64, 0, lo, here + 16), 2);
  // A range that does not contain our stack at all.
  EXPECT_EQ(StackCapturer::WalkFramePointers(pcs, 64, 0, 4096, 8192), 0);
  // The real range gives at least this function (gtest's own frames have no frame pointers, so
  // the chain legitimately ends there: what matters is that it ends without a fault).
  EXPECT_GE(StackCapturer::WalkFramePointers(pcs, 64, 0, lo, hi), 1);
}

TEST(StackTest, NoneCapturesNothing) {
  StackCapturer capturer;
  std::string note;
  EXPECT_EQ(capturer.Init(StackMode::kNone, &note), StackMode::kNone);
  uint64_t pcs[8];
  EXPECT_EQ(capturer.Capture(pcs, 8, 0, 0, 0), 0);
}

// --- interning ---

TEST(StackTableTest, RepeatedStackCostsOnlyItsId) {
  StackTable table;
  std::vector<uint32_t> frames;
  std::vector<std::pair<uint32_t, uint64_t>> new_frames;
  const uint64_t a[] = {0x1000, 0x2000, 0x3000};
  bool is_new = false;
  const uint32_t id = table.InternStack(a, 3, false, &is_new, &frames, &new_frames);
  EXPECT_TRUE(is_new);
  EXPECT_GT(id, 0u);
  EXPECT_EQ(frames.size(), 3u);
  EXPECT_EQ(new_frames.size(), 3u);
  new_frames.clear();
  EXPECT_EQ(table.InternStack(a, 3, false, &is_new, &frames, &new_frames), id);
  EXPECT_FALSE(is_new);
  EXPECT_TRUE(new_frames.empty());
  EXPECT_EQ(table.stack_count(), 1u);
}

TEST(StackTableTest, DistinctStacksShareFrames) {
  StackTable table;
  std::vector<uint32_t> f1, f2;
  std::vector<std::pair<uint32_t, uint64_t>> new_frames;
  const uint64_t a[] = {0x1000, 0x2000, 0x3000};
  const uint64_t b[] = {0x1111, 0x2000, 0x3000};
  bool is_new = false;
  const uint32_t ia = table.InternStack(a, 3, false, &is_new, &f1, &new_frames);
  new_frames.clear();
  const uint32_t ib = table.InternStack(b, 3, false, &is_new, &f2, &new_frames);
  EXPECT_NE(ia, ib);
  ASSERT_EQ(new_frames.size(), 1u);  // only 0x1111 is new
  EXPECT_EQ(new_frames[0].second, 0x1111u);
  EXPECT_EQ(f1[1], f2[1]);
  EXPECT_EQ(f1[2], f2[2]);
  EXPECT_NE(f1[0], f2[0]);
  // The same PCs, but cut at the depth limit, are a different stack.
  EXPECT_NE(table.InternStack(a, 3, true, &is_new, &f1, &new_frames), ia);
  EXPECT_TRUE(is_new);
  // A prefix is a different stack too.
  EXPECT_NE(table.InternStack(a, 2, false, &is_new, &f1, &new_frames), ia);
  EXPECT_EQ(table.stack_count(), 4u);
  EXPECT_EQ(table.frame_count(), 4u);
}

// --- stacks through the recorder ---

__attribute__((noinline)) int Recurse(RingRecorder& recorder, int depth) {
  if (depth == 0) {
    ApiCallEvent e{};
    e.api_id = 1;
    recorder.RecordApiCall(e, true, 0);
    return 0;
  }
  const int r = Recurse(recorder, depth - 1) + 1;
  __asm__ volatile("" ::: "memory");
  return r;
}

TEST(StackTest, RecorderCutsAtTheDepthAndFlagsTruncation) {
  for (StackMode mode : {StackMode::kUnwind, StackMode::kFramePointer}) {
    RingPool pool;
    ASSERT_TRUE(pool.Init(64 * 1024));
    StackCapturer capturer;
    std::string note;
    capturer.Init(mode, &note);
    RingRecorder recorder(&pool, &capturer, 8, 16);
    Recurse(recorder, 20);  // deeper than 8
    Recurse(recorder, 0);   // shallower: gtest's frames and main, fewer than... may exceed 8
    int seen = 0;
    pool.ring(0).ring.Drain([&](const RingRecordHeader& h) {
      const ApiCallView v = RingRecorder::View(h);
      if (seen++ == 0) {
        EXPECT_EQ(v.pc_count, 8) << static_cast<int>(mode);
        EXPECT_TRUE(v.truncated);
      }
      EXPECT_LE(v.pc_count, 8);
    });
    EXPECT_EQ(seen, 2);
  }
}

}  // namespace
}  // namespace gs

namespace gs {
namespace {

TEST(StackTest, RecordingNeverChangesErrno) {
  for (StackMode mode : {StackMode::kUnwind, StackMode::kFramePointer, StackMode::kNone}) {
    RingPool pool;
    ASSERT_TRUE(pool.Init(256 * 1024));
    StackCapturer capturer;
    std::string note;
    capturer.Init(mode, &note);
    RingRecorder recorder(&pool, &capturer, 32, 16);
    // The main thread's first call claims a ring (pthread_getattr_np reads /proc in fp mode);
    // a new thread's first call maps libunwind's per-thread cache in unwind mode.
    ApiCallEvent e{};
    errno = 4321;
    recorder.RecordApiCall(e, true, 0);
    EXPECT_EQ(errno, 4321);
    int thread_errno = 0;
    std::thread([&] {
      errno = 8765;
      recorder.RecordApiCall(e, true, 0);
      recorder.RecordApiCall(e, true, 0);
      thread_errno = errno;
    }).join();
    EXPECT_EQ(thread_errno, 8765) << static_cast<int>(mode);
  }
}

}  // namespace
}  // namespace gs

namespace gs {
namespace {

// --- stack reuse (ring_recorder.h): a call site known to the recorder, as the shim's wrappers
// give it (here: CallFrom plays the wrapper, skip 1 drops it as the shim's skip 2 drops End and
// the wrapper).

__attribute__((noinline)) void CallFrom(RingRecorder& recorder) {
  ApiCallEvent e{};
  recorder.RecordApiCallFrom(e, true, 1,
                             CallSite{reinterpret_cast<uintptr_t>(__builtin_return_address(0)),
                                      reinterpret_cast<uintptr_t>(__builtin_dwarf_cfa())});
  __asm__ volatile("" ::: "memory");
}

// One call site for CallFrom, whichever caller: two callers at the same depth give the same site
// PC and stack pointer, but a different return address one frame up.
__attribute__((noinline)) void Middle(RingRecorder& recorder) {
  CallFrom(recorder);
  __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void MiddleFromA(RingRecorder& recorder) {
  Middle(recorder);
  __asm__ volatile("" ::: "memory");
}

volatile int g_not_folded = 0;
__attribute__((noinline)) void MiddleFromB(RingRecorder& recorder) {
  g_not_folded = 1;  // not identical to MiddleFromA: the compiler must not fold the two into one
  Middle(recorder);
  __asm__ volatile("" ::: "memory");
}

// The same site PC at another stack pointer.
__attribute__((noinline)) void Nest(RingRecorder& recorder, int depth) {
  if (depth == 0) {
    Middle(recorder);
  } else {
    Nest(recorder, depth - 1);
  }
  __asm__ volatile("" ::: "memory");
}

// The ring's stacks as a reader sees them: reused ones resolved through `reused`, which lives as
// long as the ring's owner (reused_stacks.h).
std::vector<std::vector<uint64_t>> DrainStacks(RingPool& pool, ReusedStacks* reused) {
  std::vector<std::vector<uint64_t>> stacks;
  pool.ring(0).ring.Drain([&](const RingRecordHeader& h) {
    ApiCallView v = RingRecorder::View(h);
    reused->Resolve(&v);
    stacks.emplace_back(v.pcs, v.pcs + v.pc_count);
  });
  return stacks;
}

TEST(StackTest, LoopFromOneSiteUnwindsOnceAndAnotherSiteOrStackPointerUnwindsAgain) {
  for (StackMode mode : {StackMode::kUnwind, StackMode::kFramePointer}) {
    SCOPED_TRACE(static_cast<int>(mode));
    RingPool pool;
    ASSERT_TRUE(pool.Init(1024 * 1024));
    StackCapturer capturer;
    std::string note;
    capturer.Init(mode, &note);
    RingRecorder recorder(&pool, &capturer, 32, 16);
    ThreadRing& ring = pool.ring(0);  // the first thread to record takes ring 0
    ReusedStacks reused;

    // A back-to-back loop: one unwind, 99 reuses, 100 identical stacks.
    volatile int calls = 100;
    for (int i = 0; i < calls; ++i) Nest(recorder, 0);
    EXPECT_EQ(ring.stack_unwinds, 1u);
    EXPECT_EQ(ring.stack_reuses, 99u);
    std::vector<std::vector<uint64_t>> loop = DrainStacks(pool, &reused);
    ASSERT_EQ(loop.size(), 100u);
    ASSERT_GE(loop[0].size(), 4u);  // CallFrom's site in Middle, Nest, this test, gtest...
    for (const auto& s : loop) EXPECT_EQ(s, loop[0]);

    // The same site PC deeper (Nest recursed): a fresh unwind, with the extra frames.
    Nest(recorder, 3);
    EXPECT_EQ(ring.stack_unwinds, 2u);
    std::vector<std::vector<uint64_t>> deeper = DrainStacks(pool, &reused);
    ASSERT_EQ(deeper.size(), 1u);
    EXPECT_EQ(deeper[0][0], loop[0][0]);
    EXPECT_EQ(deeper[0].size(), loop[0].size() + 3);

    // Same site PC and stack pointer, another caller above: the slot check catches it.
    for (int i = 0; i < 2 * calls / 100; ++i) MiddleFromA(recorder);
    for (int i = 0; i < 2 * calls / 100; ++i) MiddleFromB(recorder);
    EXPECT_EQ(ring.stack_unwinds, 4u);
    EXPECT_EQ(ring.stack_reuses, 101u);
    std::vector<std::vector<uint64_t>> ab = DrainStacks(pool, &reused);
    ASSERT_EQ(ab.size(), 4u);
    EXPECT_EQ(ab[0], ab[1]);
    EXPECT_EQ(ab[2], ab[3]);
    EXPECT_EQ(ab[0][0], ab[2][0]);  // same site
    EXPECT_NE(ab[0][1], ab[2][1]);  // returns into MiddleFromA vs MiddleFromB
    EXPECT_NE(ab[0][2], ab[2][2]);

    // Each of those freshly unwound stacks is what a plain unwind gives (no site: no reuse).
    const uint64_t before = ring.stack_unwinds;
    recorder.RecordApiCall(ApiCallEvent{}, true, 0);
    recorder.RecordApiCall(ApiCallEvent{}, true, 0);
    EXPECT_EQ(ring.stack_unwinds, before + 2);
    DrainStacks(pool, &reused);
  }
}

}  // namespace
}  // namespace gs
