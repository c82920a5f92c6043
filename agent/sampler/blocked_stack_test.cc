// BlockedStackUnwinder on a real thread of this test, blocked in read() two calls deep, and on
// stacks that cannot be unwound (unmapped, garbage); with each way of copying the stack.
#include "agent/sampler/blocked_stack.h"

#include <libunwind.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "agent/sampler/task_proc.h"
#include "gtest/gtest.h"

namespace gs {
namespace {

// Built with frame pointers (CMakeLists.txt): their CFA is RBP-based, so the unwinder has to
// find the live RBP that the syscall file does not give.
__attribute__((noinline)) void BlockInRead(int fd, std::atomic<uint64_t>* tid) {
  tid->store(static_cast<uint64_t>(syscall(SYS_gettid)));
  char c;
  const ssize_t r = read(fd, &c, 1);
  asm volatile("" : : "r"(r) : "memory");  // no tail call: this frame stays while it blocks
}

__attribute__((noinline)) void CallerOfBlockInRead(int fd, std::atomic<uint64_t>* tid) {
  BlockInRead(fd, tid);
  asm volatile("" ::: "memory");
}

// 48 frames of 1 KiB each above BlockInRead: more than the first 32 KiB copy.
__attribute__((noinline)) void Nest(int fd, std::atomic<uint64_t>* tid, int depth) {
  volatile char local[1024];
  local[0] = static_cast<char>(depth);
  if (depth > 0) {
    Nest(fd, tid, depth - 1);
  } else {
    BlockInRead(fd, tid);
  }
  asm volatile("" : : "r"(local[0]) : "memory");
}

__attribute__((noinline)) void DeepCaller(int fd, std::atomic<uint64_t>* tid) {
  Nest(fd, tid, 48);
  asm volatile("" ::: "memory");
}

// The start of the function that `pc` (a return address when `return_address`) lies in.
uintptr_t FunctionStart(uint64_t pc, bool return_address) {
  unw_proc_info_t info;
  if (unw_get_proc_info_by_ip(unw_local_addr_space, return_address ? pc - 1 : pc, &info, nullptr) != 0) return 0;
  return static_cast<uintptr_t>(info.start_ip);
}

class BlockedStackTest : public ::testing::TestWithParam<BlockedStackUnwinder::CopyMethod> {};

TEST_P(BlockedStackTest, UnwindsABlockedThreadThroughItsCallers) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::atomic<uint64_t> tid{0};
  std::thread blocked([&] { CallerOfBlockInRead(fds[0], &tid); });
  while (tid.load() == 0) usleep(1000);
  TaskFiles files;
  ASSERT_TRUE(files.Open(tid.load()));
  TaskSyscall call;
  for (int i = 0; i < 2000; ++i) {  // until it is inside read()
    if (files.ReadSyscall(&call) && call.kind == TaskSyscall::kInSyscall && call.nr == SYS_read) break;
    usleep(1000);
  }
  ASSERT_EQ(call.kind, TaskSyscall::kInSyscall);
  ASSERT_EQ(call.nr, SYS_read);

  BlockedStackUnwinder unwinder;
  ASSERT_TRUE(unwinder.Init());
  unwinder.set_copy_method(GetParam());
  uint64_t pcs[64];
  size_t copied = 0;
  const int n = unwinder.Unwind(call.sp, call.pc, pcs, 64, &copied);
  EXPECT_GT(copied, 0u);
  TaskSyscall again;
  ASSERT_TRUE(files.ReadSyscall(&again));
  EXPECT_EQ(again.sp, call.sp);  // still blocked: the copy was not torn

  ASSERT_GE(n, 3);
  EXPECT_EQ(pcs[0], call.pc);
  int at_block = -1, at_caller = -1;
  for (int i = 1; i < n; ++i) {
    const uintptr_t start = FunctionStart(pcs[i], true);
    if (start == reinterpret_cast<uintptr_t>(&BlockInRead) && at_block < 0) at_block = i;
    if (start == reinterpret_cast<uintptr_t>(&CallerOfBlockInRead) && at_caller < 0) at_caller = i;
  }
  EXPECT_GE(at_block, 1) << "BlockInRead is not among the " << n << " frames";
  EXPECT_EQ(at_caller, at_block + 1) << "its caller does not follow it";
  // Beyond the caller: the lambda and std::thread's entry, down to the thread's start routine.
  EXPECT_GT(n, at_caller + 1);

  ASSERT_EQ(write(fds[1], "x", 1), 1);
  blocked.join();
  close(fds[0]);
  close(fds[1]);
}

TEST_P(BlockedStackTest, StackDeeperThanTheFirstCopyIsCopiedWhole) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::atomic<uint64_t> tid{0};
  std::thread blocked([&] { DeepCaller(fds[0], &tid); });
  while (tid.load() == 0) usleep(1000);
  TaskFiles files;
  ASSERT_TRUE(files.Open(tid.load()));
  TaskSyscall call;
  for (int i = 0; i < 2000; ++i) {
    if (files.ReadSyscall(&call) && call.kind == TaskSyscall::kInSyscall && call.nr == SYS_read) break;
    usleep(1000);
  }
  ASSERT_EQ(call.nr, SYS_read);
  BlockedStackUnwinder unwinder;
  ASSERT_TRUE(unwinder.Init());
  unwinder.set_copy_method(GetParam());
  uint64_t pcs[128];
  size_t copied = 0;
  const int n = unwinder.Unwind(call.sp, call.pc, pcs, 128, &copied);
  EXPECT_GT(copied, 48u * 1024);
  int nests = 0, deep_caller = -1;
  for (int i = 1; i < n; ++i) {
    const uintptr_t start = FunctionStart(pcs[i], true);
    if (start == reinterpret_cast<uintptr_t>(&Nest)) ++nests;
    if (start == reinterpret_cast<uintptr_t>(&DeepCaller)) deep_caller = i;
  }
  EXPECT_EQ(nests, 49);
  EXPECT_GT(deep_caller, 49) << "the walk stopped inside the recursion, " << n << " frames";
  ASSERT_EQ(write(fds[1], "x", 1), 1);
  blocked.join();
  close(fds[0]);
  close(fds[1]);
}

TEST_P(BlockedStackTest, UnreadableOrGarbageStackGivesTheLeafOnlyWithoutFaulting) {
  BlockedStackUnwinder unwinder;
  ASSERT_TRUE(unwinder.Init(64 * 1024));
  unwinder.set_copy_method(GetParam());
  uint64_t pcs[32];
  const uint64_t pc = reinterpret_cast<uint64_t>(&BlockInRead) + 4;
  size_t copied = 1;
  // Page 16 of the address space is never mapped: nothing is copied, the leaf stays.
  EXPECT_EQ(unwinder.Unwind(16 * 4096, pc, pcs, 32, &copied), 1);
  EXPECT_EQ(copied, 0u);
  EXPECT_EQ(pcs[0], pc);
  // A "stack" of words that point everywhere: kernel addresses, unmapped user pages, into the
  // copy itself, into code. Whatever the unwinder follows must not fault.
  static uint64_t garbage[4096];
  uint64_t x = 88172645463325252ull;
  for (int round = 0; round < 50; ++round) {
    for (uint64_t& word : garbage) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      switch (x % 4) {
        case 0: word = x; break;
        case 1: word = 16 * 4096 + (x % 4096) * 8; break;
        case 2: word = reinterpret_cast<uint64_t>(garbage) + (x % sizeof garbage); break;
        default: word = reinterpret_cast<uint64_t>(&BlockInRead) + x % 64; break;
      }
    }
    const int n = unwinder.Unwind(reinterpret_cast<uint64_t>(garbage), pc, pcs, 32, &copied);
    EXPECT_GE(n, 1);
    EXPECT_LE(n, 32);
  }
}

// With the thread's stack top known, the copy ends exactly there (process_vm_readv goes on into
// whatever readable mapping lies above it), and the walk finds the same frames.
TEST(BlockedStackTopTest, CopyEndsAtAKnownStackTopWithTheSameFrames) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::atomic<uint64_t> tid{0};
  std::thread blocked([&] { CallerOfBlockInRead(fds[0], &tid); });
  while (tid.load() == 0) usleep(1000);
  pthread_attr_t attr;
  ASSERT_EQ(pthread_getattr_np(blocked.native_handle(), &attr), 0);
  void* low = nullptr;
  size_t size = 0;
  ASSERT_EQ(pthread_attr_getstack(&attr, &low, &size), 0);
  pthread_attr_destroy(&attr);
  const uint64_t top = reinterpret_cast<uint64_t>(low) + size;
  TaskFiles files;
  ASSERT_TRUE(files.Open(tid.load()));
  TaskSyscall call;
  for (int i = 0; i < 2000; ++i) {
    if (files.ReadSyscall(&call) && call.kind == TaskSyscall::kInSyscall && call.nr == SYS_read) break;
    usleep(1000);
  }
  ASSERT_EQ(call.nr, SYS_read);
  ASSERT_LT(call.sp, top);
  ASSERT_LT(top - call.sp, 32u * 1024) << "the blocked thread's stack is shallow";

  BlockedStackUnwinder unwinder;
  ASSERT_TRUE(unwinder.Init());
  uint64_t syscall_pcs[64], top_pcs[64];
  size_t syscall_copied = 0, top_copied = 0;
  const int from_syscall = unwinder.Unwind(call.sp, call.pc, syscall_pcs, 64, &syscall_copied);
  const int from_top = unwinder.Unwind(call.sp, call.pc, top_pcs, 64, &top_copied, top);
  EXPECT_EQ(top_copied, top - call.sp);
  EXPECT_GE(syscall_copied, top_copied);
  ASSERT_GE(from_top, 3);
  ASSERT_EQ(from_top, from_syscall);
  for (int i = 0; i < from_top; ++i) EXPECT_EQ(top_pcs[i], syscall_pcs[i]) << "frame " << i;
  TaskSyscall again;
  ASSERT_TRUE(files.ReadSyscall(&again));
  EXPECT_EQ(again.sp, call.sp);  // still blocked: neither copy was torn

  ASSERT_EQ(write(fds[1], "x", 1), 1);
  blocked.join();
  close(fds[0]);
  close(fds[1]);
}

INSTANTIATE_TEST_SUITE_P(CopyMethods, BlockedStackTest,
                         ::testing::Values(BlockedStackUnwinder::CopyMethod::kProcessVmReadv,
                                           BlockedStackUnwinder::CopyMethod::kGuardedLoads),
                         [](const ::testing::TestParamInfo<BlockedStackUnwinder::CopyMethod>& info) {
                           return info.param == BlockedStackUnwinder::CopyMethod::kProcessVmReadv
                                      ? "ProcessVmReadv"
                                      : "GuardedLoads";
                         });

}  // namespace
}  // namespace gs
