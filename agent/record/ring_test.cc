#include "agent/record/ring.h"

#include <pthread.h>
#include <signal.h>
#include <sys/time.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "agent/record/ring_pool.h"
#include "agent/record/ring_recorder.h"
#include "agent/stacks/stack_capture.h"
#include "gtest/gtest.h"

namespace gs {
namespace {

// A test record: header + a sequence number + `extra` filler words.
struct Written {
  uint64_t sequence;
  uint16_t extra;
};

bool WriteRecord(SpscRing& ring, uint64_t sequence, uint16_t extra) {
  const size_t size = sizeof(RingRecordHeader) + 8 + extra * 8u;
  uint8_t* p = ring.BeginWrite(size);
  if (p == nullptr) return false;
  auto* h = reinterpret_cast<RingRecordHeader*>(p);
  h->size = static_cast<uint32_t>(size);
  h->type = kRingApiCall;
  h->flags = 0;
  h->count = extra;
  std::memcpy(p + 8, &sequence, 8);
  for (uint16_t i = 0; i < extra; ++i) {
    const uint64_t filler = sequence * 1000 + i;
    std::memcpy(p + 16 + i * 8u, &filler, 8);
  }
  ring.CommitWrite(size);
  return true;
}

// Drains and checks each record's filler; appends sequence numbers to `out`.
size_t DrainChecked(SpscRing& ring, std::vector<uint64_t>* out, bool* corrupt) {
  return ring.Drain([&](const RingRecordHeader& h) {
    const uint8_t* p = reinterpret_cast<const uint8_t*>(&h);
    uint64_t sequence;
    std::memcpy(&sequence, p + 8, 8);
    for (uint16_t i = 0; i < h.count; ++i) {
      uint64_t filler;
      std::memcpy(&filler, p + 16 + i * 8u, 8);
      if (filler != sequence * 1000 + i) *corrupt = true;
    }
    if (h.size != sizeof(RingRecordHeader) + 8 + h.count * 8u) *corrupt = true;
    out->push_back(sequence);
  });
}

TEST(RingTest, FullBufferDropsAndCounts) {
  alignas(8) static uint8_t memory[1024];
  SpscRing ring;
  ring.Init(memory, sizeof(memory));
  int written = 0, dropped = 0;
  for (int i = 0; i < 100; ++i) (WriteRecord(ring, i, 6) ? written : dropped)++;  // 64-byte records
  EXPECT_EQ(written, 16);
  EXPECT_EQ(dropped, 84);
  EXPECT_EQ(ring.used_bytes(), 1024u);
  std::vector<uint64_t> seen;
  bool corrupt = false;
  EXPECT_EQ(DrainChecked(ring, &seen, &corrupt), 16u);
  EXPECT_FALSE(corrupt);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(seen[i], static_cast<uint64_t>(i));
  EXPECT_TRUE(WriteRecord(ring, 100, 6));  // room again after the drain
}

TEST(RingTest, OversizedRecordIsRefused) {
  alignas(8) static uint8_t memory[256];
  SpscRing ring;
  ring.Init(memory, sizeof(memory));
  EXPECT_EQ(ring.BeginWrite(257), nullptr);
  EXPECT_NE(ring.BeginWrite(256), nullptr);
}

TEST(RingTest, WraparoundKeepsRecordsContiguousAndInOrder) {
  alignas(8) static uint8_t memory[512];
  SpscRing ring;
  ring.Init(memory, sizeof(memory));
  std::vector<uint64_t> seen;
  bool corrupt = false;
  uint64_t next = 0;
  // Sizes that do not divide the capacity force padding records at every wrap.
  for (int round = 0; round < 500; ++round) {
    for (int k = 0; k < 3; ++k) ASSERT_TRUE(WriteRecord(ring, next++, static_cast<uint16_t>((round + k) % 11)));
    DrainChecked(ring, &seen, &corrupt);
  }
  EXPECT_FALSE(corrupt);
  ASSERT_EQ(seen.size(), next);
  for (uint64_t i = 0; i < next; ++i) ASSERT_EQ(seen[i], i);
}

TEST(RingTest, ConcurrentProducerAndConsumer) {
  static std::vector<uint8_t> memory(4096);
  SpscRing ring;
  ring.Init(memory.data(), memory.size());
  constexpr uint64_t kRecords = 200000;
  std::atomic<bool> done{false};
  std::vector<uint64_t> written_sequences;
  std::thread producer([&] {
    for (uint64_t i = 0; i < kRecords; ++i)
      if (WriteRecord(ring, i, static_cast<uint16_t>(i % 9))) written_sequences.push_back(i);
    done.store(true, std::memory_order_release);
  });
  std::vector<uint64_t> seen;
  bool corrupt = false;
  while (!done.load(std::memory_order_acquire)) DrainChecked(ring, &seen, &corrupt);
  producer.join();
  DrainChecked(ring, &seen, &corrupt);
  EXPECT_FALSE(corrupt);
  // Exactly the records the producer managed to write, in order; the rest were dropped.
  EXPECT_EQ(seen, written_sequences);
  EXPECT_GT(seen.size(), 0u);
}

// --- the pool and the recorder's per-thread rings ---

ApiCallEvent Event(uint64_t n) {
  ApiCallEvent e{};
  e.enter_ns = n;
  e.exit_ns = n + 1;
  e.api_id = 7;
  e.source = ApiSource::kInterposer;
  return e;
}

struct Harness {
  RingPool pool;
  StackCapturer stacks;
  std::unique_ptr<RingRecorder> recorder;
  Harness(size_t pool_bytes, StackMode mode, int depth) {
    EXPECT_TRUE(pool.Init(pool_bytes, 64 * 1024));
    std::string note;
    stacks.Init(mode, &note);
    recorder = std::make_unique<RingRecorder>(&pool, &stacks, depth, 1024);
  }
  uint64_t TotalDropped() {
    uint64_t d = pool.no_ring_drops();
    for (size_t i = 0; i < pool.ring_count(); ++i) d += pool.ring(i).dropped.load();
    return d;
  }
  size_t DrainAll() {
    size_t n = 0;
    for (size_t i = 0; i < pool.ring_count(); ++i) {
      ThreadRing& r = pool.ring(i);
      const int state = r.state.load(std::memory_order_acquire);
      if (state != ThreadRing::kOwned && state != ThreadRing::kExited) continue;
      n += r.ring.Drain([](const RingRecordHeader&) {});
      if (state == ThreadRing::kExited) RingPool::Recycle(&r);
    }
    return n;
  }
};

TEST(RingTest, RecorderDropsAndCountsPerThreadWhenItsRingIsFull) {
  Harness h(2 * 64 * 1024, StackMode::kNone, 8);
  ASSERT_EQ(h.pool.ring_capacity(), 64u * 1024);
  // 72-byte records (header + event, no stack): 910 fit in 64 KiB.
  for (int i = 0; i < 2000; ++i) h.recorder->RecordApiCall(Event(i), false, 0);
  EXPECT_EQ(h.TotalDropped(), 2000u - (64 * 1024) / 72);
  EXPECT_EQ(h.DrainAll(), (64u * 1024) / 72);
}

TEST(RingTest, ThreadWithoutAFreeRingDropsAndCounts) {
  Harness h(64 * 1024, StackMode::kNone, 8);  // exactly one ring
  ASSERT_EQ(h.pool.ring_count(), 1u);
  h.recorder->RecordApiCall(Event(1), false, 0);  // this thread takes the only ring
  std::thread other([&] {
    for (int i = 0; i < 5; ++i) h.recorder->RecordApiCall(Event(i), false, 0);
  });
  other.join();
  EXPECT_EQ(h.pool.no_ring_drops(), 5u);
  EXPECT_EQ(h.DrainAll(), 1u);
}

TEST(RingTest, ExitedThreadsRingIsDrainedThenRecycled) {
  Harness h(64 * 1024, StackMode::kNone, 8);  // one ring shared by successive threads
  for (int t = 0; t < 3; ++t) {
    uint64_t tid = 0;
    std::thread worker([&] {
      for (int i = 0; i < 10; ++i) h.recorder->RecordApiCall(Event(i), false, 0);
      tid = h.pool.ring(0).tid;
    });
    worker.join();
    EXPECT_EQ(h.pool.ring(0).state.load(), ThreadRing::kExited);
    EXPECT_EQ(h.DrainAll(), 10u) << "thread " << t;  // records of the dead thread are not lost
    EXPECT_EQ(h.pool.ring(0).state.load(), ThreadRing::kFree);
    EXPECT_NE(tid, 0u);
  }
  EXPECT_EQ(h.TotalDropped(), 0u);
}

TEST(RingTest, RecordsEachCallExactlyOnce) {
  Harness h(64 * 1024, StackMode::kNone, 8);
  for (int i = 0; i < 100; ++i) h.recorder->RecordApiCall(Event(i), false, 0);
  EXPECT_EQ(h.DrainAll(), 100u);
}

HostWaitEvent Wait(uint64_t enter_ns, uint64_t exit_ns) {
  HostWaitEvent e{};
  e.enter_ns = enter_ns;
  e.exit_ns = exit_ns;
  e.function = 3;
  e.state = HostWaitState::kLockWait;
  return e;
}

// A thread that records no CUDA call (CUPTI's, a library's pool) gets no ring for its waits: it
// neither takes a ring from the threads that launch nor becomes a sampled thread.
TEST(RingTest, HostWaitOfAThreadWithoutARingIsNotRecordedUnlessAnyThread) {
  Harness h(2 * 64 * 1024, StackMode::kNone, 8);
  std::thread waiter([&] { h.recorder->RecordHostWait(Wait(1, 2), false, 0, CallSite{}, false); });
  waiter.join();
  EXPECT_EQ(h.DrainAll(), 0u);
  EXPECT_EQ(h.TotalDropped(), 0u);  // not a loss: such threads are not recorded
  std::thread any([&] { h.recorder->RecordHostWait(Wait(1, 2), false, 0, CallSite{}, true); });
  any.join();
  EXPECT_EQ(h.DrainAll(), 1u);
}

TEST(RingTest, HostWaitsShareTheThreadsRingAndStackLayout) {
  Harness h(64 * 1024, StackMode::kFramePointer, 8);
  h.recorder->RecordApiCall(Event(1), true, 0);  // the thread now records
  const CallSite site{reinterpret_cast<uintptr_t>(__builtin_return_address(0)),
                      reinterpret_cast<uintptr_t>(__builtin_dwarf_cfa())};
  h.recorder->RecordHostWait(Wait(100, 2100000), true, 0, site, false);
  std::vector<uint8_t> types;
  HostWaitEvent seen{};
  int wait_pcs = -1, call_pcs = -1;
  h.pool.ring(0).ring.Drain([&](const RingRecordHeader& r) {
    types.push_back(r.type);
    if (r.type == kRingHostWait) {
      const HostWaitView v = RingRecorder::ViewHostWait(r);
      seen = *v.event;
      wait_pcs = v.pc_count;
    } else {
      call_pcs = RingRecorder::View(r).pc_count;
    }
  });
  ASSERT_EQ(types, (std::vector<uint8_t>{kRingApiCall, kRingHostWait}));
  EXPECT_EQ(seen.enter_ns, 100u);
  EXPECT_EQ(seen.exit_ns, 2100000u);
  EXPECT_EQ(seen.function, 3u);
  EXPECT_EQ(seen.state, HostWaitState::kLockWait);
  EXPECT_GT(wait_pcs, 0);  // the stack is captured as for an API call
  EXPECT_GT(call_pcs, 0);
}

// A signal handler that makes a blocking call while its thread is inside a record (a wrapper's
// RecordHostWait from a handler's read()): the nested record is dropped by the thread's busy flag,
// never interleaved with the one in progress. Every record that arrives is whole, and every call
// is either recorded or was nested.
RingRecorder* g_signal_recorder = nullptr;
volatile sig_atomic_t g_handler_recorded = 0, g_handler_nested = 0;
void RecordFromHandler(int) {
  const bool nested = RingRecorder::CallingThreadInRecord();
  g_signal_recorder->RecordHostWait(Wait(7, 8), true, 0, CallSite{}, false);
  if (nested) {
    g_handler_nested = g_handler_nested + 1;
  } else {
    g_handler_recorded = g_handler_recorded + 1;
  }
}

TEST(RingTest, HostWaitFromASignalHandlerInsideARecordIsDroppedNotInterleaved) {
  Harness h(1 << 20, StackMode::kUnwind, 32);
  g_signal_recorder = h.recorder.get();
  struct sigaction action {}, old {};
  action.sa_handler = &RecordFromHandler;
  sigemptyset(&action.sa_mask);
  ASSERT_EQ(sigaction(SIGALRM, &action, &old), 0);
  itimerval timer{{0, 50}, {0, 50}};  // every 50 us (high-resolution timer; the only thread)
  ASSERT_EQ(setitimer(ITIMER_REAL, &timer, nullptr), 0);
  uint64_t outer = 0, drained = 0;
  bool whole = true;
  auto drain = [&] {
    h.pool.ring(0).ring.Drain([&](const RingRecordHeader& r) {
      ++drained;
      if (r.type == kRingHostWait) {
        const HostWaitView v = RingRecorder::ViewHostWait(r);
        whole &= (v.event->enter_ns == 1 && v.event->exit_ns == 2) || (v.event->enter_ns == 7 && v.event->exit_ns == 8);
        whole &= v.pc_count > 0 && v.pc_count <= 32;
      } else {
        whole &= r.type == kRingApiCall;
      }
    });
  };
  for (int round = 0; round < 1000; ++round) {
    for (int i = 0; i < 200; ++i, ++outer) h.recorder->RecordHostWait(Wait(1, 2), true, 0, CallSite{}, true);
    drain();
  }
  itimerval off{};
  setitimer(ITIMER_REAL, &off, nullptr);
  sigaction(SIGALRM, &old, nullptr);
  drain();
  EXPECT_TRUE(whole);
  EXPECT_EQ(drained + h.TotalDropped(), outer + static_cast<uint64_t>(g_handler_recorded))
      << g_handler_nested << " nested handler calls";
}

TEST(RingTest, DisabledRecorderRecordsNothing) {
  Harness h(64 * 1024, StackMode::kNone, 8);
  h.recorder->SetEnabled(false);
  EXPECT_FALSE(h.recorder->enabled());
  h.recorder->RecordApiCall(Event(1), false, 0);
  EXPECT_EQ(h.DrainAll(), 0u);
  EXPECT_EQ(h.TotalDropped(), 0u);
}

}  // namespace
}  // namespace gs

namespace gs {
namespace {

// Another library's pthread key destructor that runs after the recorder's and records.
RingRecorder* g_late_recorder = nullptr;
void LateDestructor(void*) {
  ApiCallEvent e{};
  g_late_recorder->RecordApiCall(e, false, 0);
}

TEST(RingTest, CallsAfterTheThreadsRingWasReleasedAreNotRecorded) {
  Harness h(64 * 1024, StackMode::kNone, 8);
  g_late_recorder = h.recorder.get();
  // Created after the recorder's key, so (lower index first) it runs after the recorder's.
  pthread_key_t late;
  ASSERT_EQ(pthread_key_create(&late, &LateDestructor), 0);
  std::thread worker([&] {
    pthread_setspecific(late, reinterpret_cast<void*>(1));
    h.recorder->RecordApiCall(Event(1), false, 0);
  });
  worker.join();
  // The ring was released and holds only the call made while the thread was alive.
  EXPECT_EQ(h.pool.ring(0).state.load(), ThreadRing::kExited);
  EXPECT_EQ(h.DrainAll(), 1u);
  pthread_key_delete(late);
}

}  // namespace
}  // namespace gs
