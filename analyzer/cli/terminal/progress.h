// progress.h — a one-line progress indicator on stderr for long analyses ("analysing 2/3
// big.gstrace  41%  1.2 GiB of 2.9 GiB").
//
// Drawn only where a person watches: the CLI enables it when stderr is a terminal (never into a
// pipe or a file, where "\r" lines would be noise in a log). Quiet for quick runs: nothing is drawn
// before `delay` has passed, and then at most once per `interval`. Finish() (or the destructor)
// erases the line, so the report that follows starts on a clean line and nothing is left behind.
//
// Thread safety: none; one analysis thread calls Update(). Lifetimes: `out` outlives the object.
#ifndef GPUSTALL_ANALYZER_CLI_TERMINAL_PROGRESS_H_
#define GPUSTALL_ANALYZER_CLI_TERMINAL_PROGRESS_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace gs::analyzer::cli {

class ProgressLine {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  struct Options {
    std::chrono::milliseconds delay{300};     // quick analyses never show a line
    std::chrono::milliseconds interval{100};  // redraw at most this often
    Clock clock;                              // empty: std::chrono::steady_clock::now (tests inject one)
  };

  // `enabled` false: every call is a no-op (the caller decides: stderr is a terminal).
  ProgressLine(std::ostream* out, bool enabled, Options options);
  ProgressLine(std::ostream* out, bool enabled) : ProgressLine(out, enabled, Options()) {}
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Reading file `file_index` of `files` (`name`), `bytes_read` of `file_bytes` so far.
  void Update(size_t file_index, size_t files, const std::string& name, uint64_t bytes_read,
              uint64_t file_bytes);
  // Erases the line if one was drawn. Idempotent.
  void Finish();

  bool drawn() const { return drawn_; }
  uint64_t redraws() const { return redraws_; }

 private:
  std::ostream& out_;
  const bool enabled_;
  Options options_;
  std::chrono::steady_clock::time_point start_, last_;
  bool drawn_ = false;
  size_t width_ = 0;  // columns of the last line drawn (to erase it)
  uint64_t redraws_ = 0;
};

// The progress line's text (no "\r"), e.g. "analysing 2/3 big.gstrace  41%  1.20 GiB of 2.90 GiB".
std::string ProgressText(size_t file_index, size_t files, const std::string& name, uint64_t bytes_read,
                         uint64_t file_bytes);

}  // namespace gs::analyzer::cli

#endif  // GPUSTALL_ANALYZER_CLI_TERMINAL_PROGRESS_H_
