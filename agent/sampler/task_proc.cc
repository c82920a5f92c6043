#include "agent/sampler/task_proc.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gs {
namespace {

// Reads an unsigned or signed decimal/hex number at *p (strtoull semantics), advancing *p past
// it and the following spaces. False if no digits.
bool NextNumber(const char** p, const char* end, int base, uint64_t* value) {
  const char* s = *p;
  while (s < end && *s == ' ') ++s;
  if (s >= end) return false;
  char digits[32];
  size_t n = 0;
  while (s + n < end && s[n] != ' ' && s[n] != '\n' && n < sizeof digits - 1) {
    digits[n] = s[n];
    ++n;
  }
  if (n == 0) return false;
  digits[n] = '\0';
  char* stop = nullptr;
  if (digits[0] == '-') {
    *value = static_cast<uint64_t>(std::strtoll(digits, &stop, base));
  } else {
    *value = std::strtoull(digits, &stop, base);
  }
  if (stop != digits + n) return false;
  *p = s + n;
  return true;
}

ssize_t ReadAll(int fd, char* buffer, size_t size) {
  if (fd < 0) return -1;
  const ssize_t n = pread(fd, buffer, size - 1, 0);
  if (n >= 0) buffer[n] = '\0';
  return n;
}

int OpenTaskFile(uint64_t tid, const char* name) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%llu/%s", static_cast<unsigned long long>(tid), name);
  return open(path, O_RDONLY | O_CLOEXEC);
}

}  // namespace

bool ParseTaskStat(const char* text, size_t length, TaskStat* out) {
  const char* end = text + length;
  const char* close = nullptr;
  for (const char* p = text; p < end; ++p)
    if (*p == ')') close = p;
  if (close == nullptr || close + 2 >= end) return false;
  const char* p = close + 1;
  while (p < end && *p == ' ') ++p;
  if (p >= end) return false;
  TaskStat s;
  s.state = *p++;
  // Fields 4.. follow; field 3 was the state.
  uint64_t v = 0;
  for (int field = 4; field <= 39; ++field) {
    if (!NextNumber(&p, end, 10, &v)) return false;
    if (field == 14) s.utime_ticks = v;
    if (field == 15) s.stime_ticks = v;
    if (field == 39) s.processor = static_cast<int>(v);
  }
  *out = s;
  return true;
}

bool ParseTaskSyscall(const char* text, size_t length, TaskSyscall* out) {
  const char* end = text + length;
  while (end > text && (end[-1] == '\n' || end[-1] == ' ')) --end;
  TaskSyscall s;
  if (end == text) {
    *out = s;  // kUnreadable
    return true;
  }
  if (static_cast<size_t>(end - text) == 7 && std::memcmp(text, "running", 7) == 0) {
    s.kind = TaskSyscall::kRunning;
    *out = s;
    return true;
  }
  const char* p = text;
  uint64_t v = 0;
  if (!NextNumber(&p, end, 10, &v)) return false;
  s.nr = static_cast<long>(static_cast<int64_t>(v));
  if (s.nr < 0) {
    // "-1 sp pc"
    if (!NextNumber(&p, end, 16, &s.sp) || !NextNumber(&p, end, 16, &s.pc)) return false;
    s.kind = TaskSyscall::kNoSyscall;
  } else {
    for (uint64_t& a : s.args)
      if (!NextNumber(&p, end, 16, &a)) return false;
    if (!NextNumber(&p, end, 16, &s.sp) || !NextNumber(&p, end, 16, &s.pc)) return false;
    s.kind = TaskSyscall::kInSyscall;
  }
  *out = s;
  return true;
}

bool TaskFiles::Open(uint64_t tid) {
  Close();
  stat_fd_ = OpenTaskFile(tid, "stat");
  if (stat_fd_ < 0) return false;
  syscall_fd_ = OpenTaskFile(tid, "syscall");
  return true;
}

void TaskFiles::Close() {
  if (stat_fd_ >= 0) close(stat_fd_);
  if (syscall_fd_ >= 0) close(syscall_fd_);
  stat_fd_ = syscall_fd_ = -1;
}

bool TaskFiles::ReadStat(TaskStat* out) {
  const ssize_t n = ReadAll(stat_fd_, buffer_, sizeof buffer_);
  return n > 0 && ParseTaskStat(buffer_, static_cast<size_t>(n), out);
}

bool TaskFiles::ReadSyscall(TaskSyscall* out) {
  *out = TaskSyscall();
  const ssize_t n = ReadAll(syscall_fd_, buffer_, sizeof buffer_);
  if (n <= 0) return false;
  return ParseTaskSyscall(buffer_, static_cast<size_t>(n), out);
}

void TaskFiles::ReadName(uint64_t tid, char* name, size_t size) {
  if (size == 0) return;
  name[0] = '\0';
  const int fd = OpenTaskFile(tid, "comm");
  if (fd < 0) return;
  const ssize_t n = ReadAll(fd, name, size);
  close(fd);
  if (n > 0 && name[n - 1] == '\n') name[n - 1] = '\0';
}

}  // namespace gs
