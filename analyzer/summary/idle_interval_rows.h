// idle_interval_rows.h — one trace's idle-interval rows for `gsanalyze export --tables`, kept in
// an unlinked temporary file while the trace is read instead of in memory.
//
// Why a file: a row is one steady-state gap, and a long trace has millions of them (the 10 M-event
// benchmark trace has 5 M, ~1.2 GiB as rows in memory), while nothing else the pass holds grows
// with the trace's length (analyzer/README.md). The rows cannot be written to the tables as the
// gaps come: their stack ids are numbered across the export once the trace's charged stacks are
// all known, at its end (export/tables_export.cc). So they go to a file as they come and are read
// back, in the same order, at the trace's end.
//
// The file is created on the first row, in `dir` (the export's own folder, which has room for the
// tables the rows become) or the system's temporary folder, unlinked at once (O_TMPFILE where the
// file system has it): nothing is left behind whatever way the process ends.
//
// Thread safety: none; a trace's rows are written and then read by one thread at a time.
#ifndef GPUSTALL_ANALYZER_SUMMARY_IDLE_INTERVAL_ROWS_H_
#define GPUSTALL_ANALYZER_SUMMARY_IDLE_INTERVAL_ROWS_H_

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "analyzer/classify/cause.h"
#include "analyzer/model/types.h"

namespace gs::analyzer {

// One steady-state idle gap, as `export --tables` writes it.
struct IdleIntervalRow {
  uint32_t device = 0;
  TimeNs start_ns = 0, end_ns = 0;
  Cause cause = Cause::kOther;     // largest cause
  CauseNs by_cause{};
  bool after_sync = false;
  std::string after_sync_site;     // the synchronising call's frame ("" unless after_sync)
  uint64_t stack_id = 0;           // the stack charged most of it (TraceStacks key; 0: none)
};

class IdleIntervalRows {
 public:
  // `dir`: the folder of the file ("": the system's temporary folder, TMPDIR or /tmp).
  explicit IdleIntervalRows(std::string dir = "") : dir_(std::move(dir)) {}
  ~IdleIntervalRows();
  IdleIntervalRows(const IdleIntervalRows&) = delete;
  IdleIntervalRows& operator=(const IdleIntervalRows&) = delete;

  // Adds `row` after the others. After an error (status()) rows are counted but not kept.
  void Append(const IdleIntervalRow& row);
  // Rows appended since the last Clear().
  uint64_t size() const { return size_; }
  // Calls `fn` with each row in the order appended. Errors: the file could not be created,
  // written or read back (status(), or the read's own), after the rows that were read.
  absl::Status ForEach(const std::function<void(const IdleIntervalRow&)>& fn);
  // Drops every row (the file is kept, empty, for the next trace's).
  void Clear();
  // The first error creating or writing the file; OK if none.
  const absl::Status& status() const { return status_; }
  // The folder given at construction ("": the system's temporary one).
  const std::string& dir() const { return dir_; }

 private:
  bool Open();
  void Fail(const std::string& what);

  std::string dir_;
  FILE* file_ = nullptr;
  uint64_t size_ = 0;
  absl::Status status_;
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_SUMMARY_IDLE_INTERVAL_ROWS_H_
