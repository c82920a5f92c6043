// task_proc.h — what the kernel says about one thread of this process: /proc/self/task/<tid>/stat
// (scheduler state, last CPU) and /proc/self/task/<tid>/syscall (the system call it is blocked
// in, with its arguments, stack pointer and program counter).
//
// The parsers are pure functions over the file's text (unit-tested on fixtures). TaskFiles keeps
// both files of one thread open and re-reads them with pread at offset 0 (procfs regenerates the
// text on every read), into caller-provided buffers: no allocation per read.
//
// Thread safety: the parsers are reentrant; a TaskFiles belongs to one thread (the sampler).
#ifndef GPUSTALL_AGENT_SAMPLER_TASK_PROC_H_
#define GPUSTALL_AGENT_SAMPLER_TASK_PROC_H_

#include <cstddef>
#include <cstdint>

namespace gs {

struct TaskStat {
  char state = '?';       // R running/runnable, S sleeping, D disk sleep, T/t stopped, Z zombie...
  int processor = -1;     // CPU it last ran on (field 39)
  uint64_t utime_ticks = 0;  // fields 14/15, clock ticks (the fallback CPU-time source)
  uint64_t stime_ticks = 0;
};

// Parses one stat line. The command name (field 2) may hold spaces and parentheses: fields are
// counted from the LAST ')'. Returns false on malformed text.
bool ParseTaskStat(const char* text, size_t length, TaskStat* out);

struct TaskSyscall {
  enum Kind : uint8_t {
    kUnreadable = 0,  // no text (the thread is gone, or access denied)
    kRunning = 1,     // "running": the task was runnable when read (no registers)
    kNoSyscall = 2,   // "-1 sp pc": blocked outside a system call (e.g. a page fault)
    kInSyscall = 3,   // "nr a0..a5 sp pc"
  };
  Kind kind = kUnreadable;
  long nr = -1;
  uint64_t args[6] = {};
  uint64_t sp = 0;
  uint64_t pc = 0;
};

// Parses the syscall file's text. Returns false on malformed text.
bool ParseTaskSyscall(const char* text, size_t length, TaskSyscall* out);

// The two files of one thread, kept open between reads.
class TaskFiles {
 public:
  TaskFiles() = default;
  TaskFiles(const TaskFiles&) = delete;
  TaskFiles& operator=(const TaskFiles&) = delete;
  ~TaskFiles() { Close(); }

  // Opens /proc/self/task/<tid>/{stat,syscall}. False if the thread does not exist (stat);
  // a syscall file that cannot be opened (some kernels need ptrace rights) only makes
  // ReadSyscall report kUnreadable.
  bool Open(uint64_t tid);
  void Close();
  bool is_open() const { return stat_fd_ >= 0; }

  // False when the thread has exited (the read fails or returns nothing).
  bool ReadStat(TaskStat* out);
  bool ReadSyscall(TaskSyscall* out);
  // The thread's name (/proc/self/task/<tid>/comm) into `name` (NUL-terminated), or "".
  static void ReadName(uint64_t tid, char* name, size_t size);

 private:
  int stat_fd_ = -1;
  int syscall_fd_ = -1;
  char buffer_[512];
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_SAMPLER_TASK_PROC_H_
