// trace_file.h — a trace file opened once: its name, the descriptor, and its first bytes.
//
// Whoever first needs to look inside a file (the job intake, cli/job_inputs.h, sorting a folder's
// files by content; or the one pass itself) opens it as a TraceFile, and the pass reads the trace
// over that same descriptor (analyze_traces.h): each trace file is opened once per command.
//
//   absl::StatusOr<TraceFile> f = TraceFile::Open(path);
//   if (!f.ok()) return f.status();            // "path: No such file or directory"
//   if (IsImportedTrace(f->head())) ...        // the first bytes, read without moving the offset
//
// Thread safety: none (a value, like a std::string). Move-only; closes the descriptor unless it
// was released.
#ifndef GPUSTALL_ANALYZER_ANALYSIS_TRACE_FILE_H_
#define GPUSTALL_ANALYZER_ANALYSIS_TRACE_FILE_H_

#include <string>

#include "absl/status/statusor.h"

namespace gs::analyzer {

class TraceFile {
 public:
  // Opens `path` for reading (O_RDONLY | O_CLOEXEC) and reads its first kImportSniffBytes
  // (import/open_imported.h; fewer when the file is shorter) with pread, so the offset stays 0.
  // Errors: one line naming `path` (cannot open; a read error).
  static absl::StatusOr<TraceFile> Open(const std::string& path);

  TraceFile(TraceFile&& other) noexcept;
  TraceFile& operator=(TraceFile&& other) noexcept;
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;
  ~TraceFile();

  const std::string& path() const { return path_; }
  const std::string& head() const { return head_; }
  int fd() const { return fd_; }  // -1 once released
  // Hands the descriptor (offset 0) to the caller, who closes it from here on.
  int Release();

 private:
  TraceFile(std::string path, int fd, std::string head);
  std::string path_;
  int fd_ = -1;
  std::string head_;
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_ANALYSIS_TRACE_FILE_H_
