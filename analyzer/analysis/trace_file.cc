#include "analyzer/analysis/trace_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "absl/status/status.h"
#include "analyzer/import/open_imported.h"

namespace gs::analyzer {

absl::StatusOr<TraceFile> TraceFile::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, path);
  std::string head(kImportSniffBytes, '\0');
  size_t got = 0;
  while (got < head.size()) {  // a pipe or a slow file system may return less than asked
    const ssize_t n = ::pread(fd, head.data() + got, head.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return absl::ErrnoToStatus(error, path);
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  head.resize(got);
  return TraceFile(path, fd, std::move(head));
}

TraceFile::TraceFile(std::string path, int fd, std::string head)
    : path_(std::move(path)), fd_(fd), head_(std::move(head)) {}

TraceFile::TraceFile(TraceFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), head_(std::move(other.head_)) {}

TraceFile& TraceFile::operator=(TraceFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    head_ = std::move(other.head_);
  }
  return *this;
}

TraceFile::~TraceFile() {
  if (fd_ >= 0) ::close(fd_);
}

int TraceFile::Release() { return std::exchange(fd_, -1); }

}  // namespace gs::analyzer
