#include "agent/writer/trace_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <string>

namespace gs {
namespace {

class PosixTraceFile final : public TraceFile {
 public:
  explicit PosixTraceFile(int fd) : fd_(fd) {
    const off_t offset = lseek(fd, 0, SEEK_CUR);  // 0 for a new file; a pipe has none (-1)
    offset_ = offset > 0 ? static_cast<uint64_t>(offset) : 0;
  }
  ~PosixTraceFile() override {
    std::string ignored;
    Close(&ignored);
  }

  bool Append(const void* data, size_t size, std::string* error) override {
    // RLIMIT_FSIZE: a write past it raises SIGXFSZ, whose default action kills the process. The
    // writer thread blocks it (the write then fails with EFBIG), but the final flush at exit runs
    // on an application thread: the agent must never be the reason the job dies, so it refuses
    // the write itself. Read per append (a chunk every GS_FLUSH_MS): the job may change the limit.
    struct rlimit limit;
    if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
        offset_ + size > static_cast<uint64_t>(limit.rlim_cur)) {
      *error = std::string(strerror(EFBIG)) + " (RLIMIT_FSIZE is " + std::to_string(limit.rlim_cur) +
               " bytes)";
      return false;
    }
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
      const ssize_t n = write(fd_, p, size);
      if (n < 0) {
        if (errno == EINTR) continue;
        *error = strerror(errno);
        return false;
      }
      if (n == 0) {
        *error = "write returned 0";
        return false;
      }
      p += n;
      size -= static_cast<size_t>(n);
      offset_ += static_cast<uint64_t>(n);
    }
    return true;
  }

  bool Close(std::string* error) override {
    if (fd_ < 0) return true;
    const int fd = fd_;
    fd_ = -1;
    if (close(fd) != 0 && errno != EINTR) {
      *error = strerror(errno);
      return false;
    }
    return true;
  }

 private:
  int fd_;
  uint64_t offset_ = 0;  // bytes in the file so far (the limit applies to the end offset)
};

}  // namespace

namespace {

// "dir/name.gstrace" + 2 -> "dir/name.2.gstrace"; a name without an extension gets ".2".
std::string NumberedPath(const std::string& path, int n) {
  const size_t slash = path.rfind('/');
  const size_t dot = path.rfind('.');
  const bool has_ext = dot != std::string::npos && dot > 0 &&
                       (slash == std::string::npos || dot > slash + 1);
  const std::string suffix = "." + std::to_string(n);
  if (!has_ext) return path + suffix;
  return path.substr(0, dot) + suffix + path.substr(dot);
}

}  // namespace

std::unique_ptr<TraceFile> CreateTraceFile(const std::string& path, std::string* error,
                                           std::string* actual_path) {
  constexpr int kMaxNumbered = 999;
  for (int n = 0; n <= kMaxNumbered; ++n) {
    const std::string candidate = n == 0 ? path : NumberedPath(path, n);
    int fd;
    do {
      fd = open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    } while (fd < 0 && errno == EINTR);
    if (fd >= 0) {
      if (actual_path != nullptr) *actual_path = candidate;
      return std::make_unique<PosixTraceFile>(fd);
    }
    if (errno != EEXIST) break;
  }
  *error = strerror(errno);
  return nullptr;
}

std::unique_ptr<TraceFile> TraceFileFromFd(int fd) { return std::make_unique<PosixTraceFile>(fd); }

}  // namespace gs
