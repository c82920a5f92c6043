// trace_file.h — the writer's view of its output file, small enough for a test to fake
// (leveldb Env style: a test hands the writer a file whose writes fail at a chosen byte).
//
// Thread safety: a TraceFile is used by one thread at a time (the writer's flush path).
#ifndef GPUSTALL_AGENT_WRITER_TRACE_FILE_H_
#define GPUSTALL_AGENT_WRITER_TRACE_FILE_H_

#include <cstddef>
#include <memory>
#include <string>

namespace gs {

class TraceFile {
 public:
  virtual ~TraceFile() = default;
  // Writes all `size` bytes or fails; on failure returns false and sets *error to a short reason
  // ("No space left on device"). The writer treats the first failure as final. The POSIX file
  // refuses a write that would pass RLIMIT_FSIZE (the kernel would raise SIGXFSZ: fatal by default).
  virtual bool Append(const void* data, size_t size, std::string* error) = 0;
  // Closes the file (idempotent). A failure here is reported like a write failure.
  virtual bool Close(std::string* error) = 0;
};

// Creates a new file for writing at `path`: O_WRONLY|O_CREAT|O_EXCL|O_CLOEXEC, mode 0600 (a trace
// holds the command line and code paths; other users have no business reading it).
// It never overwrites or follows a symlink: when `path` exists (an exec'd image keeps its pid, so
// the default pattern names the same file; a rerun in the same folder), it tries "NAME.1.EXT",
// "NAME.2.EXT", ... (up to 999). The name actually used goes to *actual_path when non-null.
// nullptr with *error set on failure.
std::unique_ptr<TraceFile> CreateTraceFile(const std::string& path, std::string* error,
                                           std::string* actual_path = nullptr);

// A TraceFile on an already open descriptor (taken over: Close closes it).
std::unique_ptr<TraceFile> TraceFileFromFd(int fd);

}  // namespace gs

#endif  // GPUSTALL_AGENT_WRITER_TRACE_FILE_H_
