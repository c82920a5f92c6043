#include "agent/sampler/task_proc.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "gtest/gtest.h"

namespace gs {
namespace {

bool Stat(const char* text, TaskStat* out) { return ParseTaskStat(text, std::strlen(text), out); }
bool Sys(const char* text, TaskSyscall* out) { return ParseTaskSyscall(text, std::strlen(text), out); }

// A real line from a sleeping python3 thread (fields 4..52).
const char kSleeping[] =
    "4242 (python3) S 4200 4242 4200 34816 4242 4194560 1234 0 0 0 150 25 0 0 20 0 3 0 "
    "98765 123456789 4567 18446744073709551615 1 1 0 0 0 0 0 16781312 2 0 0 0 17 1 0 0 0 0 0 "
    "0 0 0 0 0 0 0\n";

TEST(TaskProcTest, StatGivesStateCpuAndTimes) {
  TaskStat s;
  ASSERT_TRUE(Stat(kSleeping, &s));
  EXPECT_EQ(s.state, 'S');
  EXPECT_EQ(s.utime_ticks, 150u);
  EXPECT_EQ(s.stime_ticks, 25u);
  EXPECT_EQ(s.processor, 1);
}

TEST(TaskProcTest, StatCommandWithSpacesAndParenthesesIsSkipped) {
  std::string line = kSleeping;
  line.replace(line.find("(python3)"), 9, "(a) b (c))");
  line[line.find(") S ") + 2] = 'D';
  TaskStat s;
  ASSERT_TRUE(Stat(line.c_str(), &s));
  EXPECT_EQ(s.state, 'D');
  EXPECT_EQ(s.processor, 1);
}

TEST(TaskProcTest, TruncatedStatIsRejected) {
  TaskStat s;
  EXPECT_FALSE(Stat("4242 (python3) S 4200 4242", &s));
  EXPECT_FALSE(Stat("garbage", &s));
}

TEST(TaskProcTest, SyscallInSyscallGivesNumberArgumentsSpPc) {
  TaskSyscall c;
  ASSERT_TRUE(Sys("0 0x3 0x7ffd1000 0x10000 0x0 0x0 0x0 0x7ffd0ff8 0x7f12345678ab\n", &c));
  EXPECT_EQ(c.kind, TaskSyscall::kInSyscall);
  EXPECT_EQ(c.nr, 0);
  EXPECT_EQ(c.args[0], 3u);
  EXPECT_EQ(c.args[1], 0x7ffd1000u);
  EXPECT_EQ(c.args[2], 0x10000u);
  EXPECT_EQ(c.sp, 0x7ffd0ff8u);
  EXPECT_EQ(c.pc, 0x7f12345678abu);
}

TEST(TaskProcTest, SyscallRunningAndOutsideSyscall) {
  TaskSyscall c;
  ASSERT_TRUE(Sys("running\n", &c));
  EXPECT_EQ(c.kind, TaskSyscall::kRunning);
  ASSERT_TRUE(Sys("-1 0x7ffd0ff8 0x55550000abcd\n", &c));
  EXPECT_EQ(c.kind, TaskSyscall::kNoSyscall);
  EXPECT_EQ(c.sp, 0x7ffd0ff8u);
  EXPECT_EQ(c.pc, 0x55550000abcdu);
  ASSERT_TRUE(Sys("", &c));
  EXPECT_EQ(c.kind, TaskSyscall::kUnreadable);
  EXPECT_FALSE(Sys("202 0x1 0x2\n", &c));  // arguments missing
}

TEST(TaskProcTest, LiveThreadReadsAsRunning) {
  TaskFiles files;
  ASSERT_TRUE(files.Open(static_cast<uint64_t>(syscall(SYS_gettid))));
  TaskStat s;
  ASSERT_TRUE(files.ReadStat(&s));
  EXPECT_EQ(s.state, 'R');  // we are reading it: we run
  EXPECT_GE(s.processor, 0);
  char name[32];
  TaskFiles::ReadName(static_cast<uint64_t>(syscall(SYS_gettid)), name, sizeof name);
  EXPECT_STRNE(name, "");
}

TEST(TaskProcTest, MissingThreadDoesNotOpen) {
  TaskFiles files;
  EXPECT_FALSE(files.Open(999999999));
}

}  // namespace
}  // namespace gs
