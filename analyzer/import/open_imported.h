// open_imported.h — which importer reads a trace file, decided by its content, and that importer
// opened over the descriptor the one pass holds.
//
// A trace file is opened once (analysis/trace_file.h: by the one pass, analysis/analyze_traces.cc,
// or by a job's intake, which hands it to the pass), its first bytes read without moving the
// offset; the pass asks IsImportedTrace and hands the same descriptor either to OpenImported or to
// the .gstrace reader. Nothing here opens a file by name.
//
//   if (IsImportedTrace(head)) {
//     absl::StatusOr<std::unique_ptr<ImportedTrace>> t = OpenImported(fd, path);  // owns fd
//     if (!t.ok()) return t.status();   // recognised, but bad: one line naming the file
//     ... TraceImporter::FromImported(std::move(*t))
//   }
//
// How to add an importer:
//   1. A folder beside kineto/ implementing ImportedTrace (analyzer/model/imported_trace.h), its
//      sources in gs_import (this folder's CMakeLists.txt), its tests beside it.
//   2. A content test on the first bytes (magic bytes, not the file name) in IsImportedTrace and
//      an open over a descriptor in OpenImported.
//   3. Real files of that format as test data, with their source and licence beside them.
//
// Thread safety: none needed (no state).
#ifndef GPUSTALL_ANALYZER_IMPORT_OPEN_IMPORTED_H_
#define GPUSTALL_ANALYZER_IMPORT_OPEN_IMPORTED_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "analyzer/model/imported_trace.h"

namespace gs::analyzer {

// How many of a file's first bytes IsImportedTrace wants (fewer when the file is shorter).
inline constexpr size_t kImportSniffBytes = 4096;

// True when some importer recognises `head`, a file's first bytes (PyTorch profiler JSON, plain or
// gzip). False for a .gstrace.
bool IsImportedTrace(absl::string_view head);

// The text of `head` (a file's first bytes): inflated as far as it goes when gzip, as it is
// otherwise. For a look at a JSON file's leading members without reading it all (a job folder's
// files that gsanalyze wrote itself, cli/job_inputs.cc).
std::string HeadText(absl::string_view head);

// The importer that recognises the file behind `fd` (opened for reading, offset 0), reading it;
// it owns `fd` from here on, even on error. Errors name `path` in one line. Only for a file whose
// first bytes IsImportedTrace accepted. Reading is most of the time an imported trace takes:
// `progress`, when given, is called as it goes with the bytes of the file read so far.
absl::StatusOr<std::unique_ptr<ImportedTrace>> OpenImported(
    int fd, const std::string& path, const std::function<void(uint64_t bytes_read)>& progress = nullptr);

// Names of the files a folder of ranks contributes besides .gstrace ones (PyTorch profiler traces
// are written as *.json or *.json.gz): chosen by name, since nothing but the pass opens a trace.
bool HasImportedTraceName(absl::string_view path);

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_IMPORT_OPEN_IMPORTED_H_
