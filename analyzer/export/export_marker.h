// export_marker.h — what a trace-event file that gsanalyze exported from a .gstrace says about
// itself, and reading that back.
//
// Every `export --chrome` / `export --kineto` of a .gstrace starts with the member
//   "otherData": {"producer": "gsanalyze", "source": "<the .gstrace's file name>"}
// ("otherData" is the trace event format's member for metadata; viewers and HTA keep it as
// metadata). A job folder holding both the .gstrace and such a file would otherwise count the rank
// twice: the intake (cli/job_inputs.cc) reads the member from the file's first bytes and leaves the
// file out.
//
// Thread safety: none needed (no state).
#ifndef GPUSTALL_ANALYZER_EXPORT_EXPORT_MARKER_H_
#define GPUSTALL_ANALYZER_EXPORT_EXPORT_MARKER_H_

#include <optional>
#include <string>
#include <string_view>

namespace gs::analyzer {

// The member (no trailing comma) for an export of the .gstrace at `source_path` (its file name
// only: the folder is where the export was written from, not where it is read).
std::string ExportMarkerMember(std::string_view source_path);

// The source's file name when `text` (a file's leading text, inflated) is an object whose first
// member is ExportMarkerMember's; nullopt for anything else.
std::optional<std::string> ExportedFrom(std::string_view text);

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_EXPORT_EXPORT_MARKER_H_
