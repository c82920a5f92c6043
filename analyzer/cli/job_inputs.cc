#include "analyzer/cli/job_inputs.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/analysis/analyze_traces.h"
#include "analyzer/export/export_marker.h"
#include "analyzer/import/open_imported.h"
#include "analyzer/summary/summarize_trace.h"
#include "analyzer/summary/summary_file.h"

namespace gs::analyzer {

namespace fs = std::filesystem;

namespace {

// `report --json`'s output (report/json_report.cc): an object whose first member is
// "schema_version" (a PyTorch profiler trace's is spelled "schemaVersion", and it has traceEvents).
bool IsJsonReport(std::string_view text) {
  size_t i = text.find_first_not_of(" \t\r\n");
  if (i == std::string_view::npos || text[i] != '{') return false;
  i = text.find_first_not_of(" \t\r\n", i + 1);
  return i != std::string_view::npos && text.substr(i, 16) == "\"schema_version\"";
}

// Why a folder's JSON file is left out ("" when it is kept): gsanalyze wrote it, as a report, or
// as an export of a .gstrace in the same folder (`gstraces`: their file names).
std::string WhySkipped(const TraceFile& file, const std::set<std::string>& gstraces) {
  // `gsanalyze report --json DIR > DIR/report.json`: the shell makes the file before gsanalyze runs.
  if (file.head().empty() && HasImportedTraceName(file.path())) return "empty";
  if (!IsImportedTrace(file.head())) return "";
  const std::string text = HeadText(file.head());
  if (IsJsonReport(text)) return "a gsanalyze report";
  if (std::optional<std::string> source = ExportedFrom(text); source && gstraces.count(*source)) {
    return absl::StrCat("exported by gsanalyze from ", *source);
  }
  return "";
}

// A folder's files into `out`; Errors: a trace-named file that cannot be opened, a folder without
// any trace or summary.
absl::Status CollectFolder(const std::string& dir, JobInputs* out) {
  std::error_code ec;
  std::vector<std::string> files;
  std::set<std::string> gstraces;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file(ec)) continue;
    files.push_back(e.path().string());
    if (absl::EndsWith(files.back(), ".gstrace")) gstraces.insert(e.path().filename().string());
  }
  if (ec) return absl::ErrnoToStatus(ec.value(), dir);
  std::sort(files.begin(), files.end());
  const size_t before = out->traces.size() + out->summaries.size();
  std::vector<std::string> skipped;
  for (const std::string& f : files) {
    const bool trace_name = absl::EndsWith(f, ".gstrace") || HasImportedTraceName(f);
    absl::StatusOr<TraceFile> file = TraceFile::Open(f);
    if (!file.ok()) {
      if (trace_name) return file.status();
      continue;  // not ours to read (a summary is readable by whoever wrote it)
    }
    if (HasSummaryMagic(file->head())) {
      out->summaries.push_back(f);
    } else if (!trace_name) {
      continue;  // a job's other files (a simulator's truth-r0.jsonl)
    } else if (std::string why = WhySkipped(*file, gstraces); !why.empty()) {
      skipped.push_back(absl::StrCat(fs::path(f).filename().string(), " (", why, ")"));
    } else {
      // A .gstrace, or PyTorch profiler JSON (a *.json or *.json.gz; the pass says which format
      // by the first bytes, read already).
      out->traces.push_back(*std::move(file));
    }
  }
  std::string line;
  if (!skipped.empty()) {
    line = absl::StrCat("skipped ", skipped.size(), skipped.size() == 1 ? " file" : " files", " in ", dir, ": ",
                        absl::StrJoin(skipped, ", "));
  }
  if (out->traces.size() + out->summaries.size() == before) {
    return absl::NotFoundError(absl::StrCat(dir, ": no .gstrace, PyTorch profiler or summary files in it",
                                            line.empty() ? "" : " (", line, line.empty() ? "" : ")"));
  }
  if (!line.empty()) out->skipped.push_back(std::move(line));
  return absl::OkStatus();
}

}  // namespace

std::vector<std::string> JobInputs::TracePaths() const {
  std::vector<std::string> paths;
  for (const TraceFile& t : traces) paths.push_back(t.path());
  return paths;
}

absl::StatusOr<JobInputs> CollectJobInputs(const std::vector<std::string>& paths) {
  JobInputs out;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      if (absl::Status s = CollectFolder(path, &out); !s.ok()) return s;
      continue;
    }
    absl::StatusOr<TraceFile> file = TraceFile::Open(path);
    if (!file.ok()) return file.status();
    if (HasSummaryMagic(file->head())) {
      out.summaries.push_back(path);
    } else {
      out.traces.push_back(*std::move(file));  // the reader reports what is wrong with it, if anything
    }
  }
  return out;
}

absl::StatusOr<JobInputs> CollectJobTraces(const std::vector<std::string>& paths, absl::string_view why_traces) {
  absl::StatusOr<JobInputs> inputs = CollectJobInputs(paths);
  if (inputs.ok() && !inputs->summaries.empty())
    return absl::InvalidArgumentError(
        absl::StrCat(inputs->summaries[0], " is a summary (gsanalyze summarize): ", why_traces));
  return inputs;
}

namespace {
// The traces' summaries (one pass over them), then the summary files', in that order.
absl::StatusOr<std::vector<RankSummary>> AllSummaries(JobInputs inputs, const AnalysisOptions& options) {
  std::vector<RankSummary> ranks;
  if (!inputs.traces.empty()) {
    RankSummaryObserver summaries;
    AnalyzeHooks hooks;
    hooks.observers = {&summaries};
    absl::StatusOr<Analysis> analysis = AnalyzeTraces(std::move(inputs.traces), options, hooks);
    if (!analysis.ok()) return analysis.status();
    ranks = summaries.TakeSummaries();
  }
  for (const std::string& p : inputs.summaries) {
    absl::StatusOr<RankSummary> s = ReadRankSummary(p);
    if (!s.ok()) return s.status();
    ranks.push_back(std::move(*s));
  }
  return ranks;
}
}  // namespace

absl::StatusOr<Analysis> AnalysisFromJobSummaries(JobInputs inputs, const AnalysisOptions& options,
                                                  std::vector<RankSummary>* ranks_out) {
  absl::StatusOr<std::vector<RankSummary>> ranks = AllSummaries(std::move(inputs), options);
  if (!ranks.ok()) return ranks.status();
  Analysis a;
  for (const RankSummary& s : *ranks) {
    TraceInfo t;
    t.path = s.source;
    t.host = s.host_name;
    t.pid = s.pid;
    t.rank = s.rank;
    a.traces.push_back(std::move(t));
  }
  a.ranks = AnalyzeRanks(*ranks);
  a.ranks.present = true;
  if (ranks_out != nullptr) *ranks_out = std::move(*ranks);
  a.notes.push_back(
      "given summaries (gsanalyze summarize): the per-rank table and straggler only; the other "
      "sections need the traces");
  return a;
}

}  // namespace gs::analyzer
