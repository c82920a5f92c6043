#include "analyzer/summary/idle_interval_rows.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace gs::analyzer {

namespace {

// A row as the file holds it: its fixed-size fields, then `site_size` bytes of after_sync_site.
// The same process writes and reads the file, so the struct's own layout is the format.
struct FixedPart {
  uint64_t stack_id;
  int64_t start_ns, end_ns;
  CauseNs by_cause;
  uint32_t device;
  uint32_t site_size;
  uint8_t cause;
  uint8_t after_sync;
};

constexpr size_t kFileBuffer = 1 << 20;

}  // namespace

IdleIntervalRows::~IdleIntervalRows() {
  if (file_ != nullptr) fclose(file_);
}

void IdleIntervalRows::Fail(const std::string& what) {
  if (status_.ok()) status_ = absl::DataLossError(what);
}

bool IdleIntervalRows::Open() {
  if (file_ != nullptr) return true;
  if (!status_.ok()) return false;
  std::string dir = dir_;
  if (dir.empty()) {
    std::error_code ec;
    dir = std::filesystem::temp_directory_path(ec).string();
    if (ec) dir = "/tmp";
  }
  int fd = open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0 && errno != ENOENT && errno != EACCES && errno != EROFS && errno != ENOSPC) {
    // The file system has no unnamed files (EOPNOTSUPP, EISDIR on old kernels): a named one,
    // unlinked as soon as it is open.
    std::string path = dir + "/.gsanalyze-rows-XXXXXX";
    fd = mkostemp(path.data(), O_CLOEXEC);
    if (fd >= 0) unlink(path.c_str());
  }
  if (fd < 0) {
    Fail(absl::StrCat("cannot create a temporary file for the idle intervals in ", dir, ": ", strerror(errno)));
    return false;
  }
  file_ = fdopen(fd, "w+b");
  if (file_ == nullptr) {
    close(fd);
    Fail(absl::StrCat("cannot open a temporary file for the idle intervals: ", strerror(errno)));
    return false;
  }
  setvbuf(file_, nullptr, _IOFBF, kFileBuffer);
  return true;
}

void IdleIntervalRows::Append(const IdleIntervalRow& row) {
  ++size_;
  if (!Open()) return;
  FixedPart fixed;
  std::memset(&fixed, 0, sizeof(fixed));  // the padding too: the file holds no stray bytes
  fixed.stack_id = row.stack_id;
  fixed.start_ns = row.start_ns;
  fixed.end_ns = row.end_ns;
  fixed.by_cause = row.by_cause;
  fixed.device = row.device;
  fixed.site_size = static_cast<uint32_t>(row.after_sync_site.size());
  fixed.cause = static_cast<uint8_t>(row.cause);
  fixed.after_sync = row.after_sync ? 1 : 0;
  if (fwrite(&fixed, sizeof(fixed), 1, file_) != 1 ||
      (fixed.site_size != 0 && fwrite(row.after_sync_site.data(), fixed.site_size, 1, file_) != 1)) {
    Fail(absl::StrCat("cannot write the idle intervals' temporary file: ", strerror(errno)));
  }
}

absl::Status IdleIntervalRows::ForEach(const std::function<void(const IdleIntervalRow&)>& fn) {
  if (size_ == 0 || !status_.ok()) return status_;
  if (fflush(file_) != 0 || fseeko(file_, 0, SEEK_SET) != 0) {
    Fail(absl::StrCat("cannot write the idle intervals' temporary file: ", strerror(errno)));
    return status_;
  }
  IdleIntervalRow row;
  for (uint64_t i = 0; i < size_; ++i) {
    FixedPart fixed;
    if (fread(&fixed, sizeof(fixed), 1, file_) != 1) {
      return absl::DataLossError("the idle intervals' temporary file ended early");
    }
    row.stack_id = fixed.stack_id;
    row.start_ns = fixed.start_ns;
    row.end_ns = fixed.end_ns;
    row.by_cause = fixed.by_cause;
    row.device = fixed.device;
    row.cause = static_cast<Cause>(fixed.cause);
    row.after_sync = fixed.after_sync != 0;
    row.after_sync_site.resize(fixed.site_size);
    if (fixed.site_size != 0 && fread(row.after_sync_site.data(), fixed.site_size, 1, file_) != 1) {
      return absl::DataLossError("the idle intervals' temporary file ended early");
    }
    fn(row);
  }
  // Appends go on after what was read (Clear() starts over).
  if (fseeko(file_, 0, SEEK_END) != 0) Fail("cannot seek the idle intervals' temporary file");
  return status_;
}

void IdleIntervalRows::Clear() {
  size_ = 0;
  if (file_ == nullptr || !status_.ok()) return;
  if (fflush(file_) != 0 || ftruncate(fileno(file_), 0) != 0 || fseeko(file_, 0, SEEK_SET) != 0) {
    Fail(absl::StrCat("cannot empty the idle intervals' temporary file: ", strerror(errno)));
  }
}

}  // namespace gs::analyzer
