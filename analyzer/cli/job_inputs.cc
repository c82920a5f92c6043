#include "analyzer/cli/job_inputs.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analyzer/analysis/analyze_traces.h"
#include "analyzer/import/open_imported.h"
#include "analyzer/summary/summarize_trace.h"
#include "analyzer/summary/summary_file.h"

namespace gs::analyzer {

namespace fs = std::filesystem;

absl::StatusOr<JobInputs> CollectJobInputs(const std::vector<std::string>& paths) {
  JobInputs out;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<std::string> files;
      for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) {
        if (e.is_regular_file(ec)) files.push_back(e.path().string());
      }
      std::sort(files.begin(), files.end());
      size_t before = out.traces.size() + out.summaries.size();
      for (const std::string& f : files) {
        if (IsSummaryFile(f)) {
          out.summaries.push_back(f);
        } else if (absl::EndsWith(f, ".gstrace") || HasImportedTraceName(f)) {
          // PyTorch profiler JSON too, by name (a job's truth-r0.jsonl is not taken): the pass alone
          // opens traces, and says which format each is by its content.
          out.traces.push_back(f);
        }
      }
      if (out.traces.size() + out.summaries.size() == before) {
        return absl::NotFoundError(absl::StrCat(path, ": no .gstrace, PyTorch profiler or summary files in it"));
      }
    } else if (IsSummaryFile(path)) {
      out.summaries.push_back(path);
    } else {
      out.traces.push_back(path);  // the reader reports what is wrong with it, if anything
    }
  }
  return out;
}

namespace {
// The traces' summaries (one pass over them), then the summary files', in that order.
absl::StatusOr<std::vector<RankSummary>> AllSummaries(const JobInputs& inputs,
                                                      const AnalysisOptions& options) {
  std::vector<RankSummary> ranks;
  if (!inputs.traces.empty()) {
    RankSummaryObserver summaries;
    AnalyzeHooks hooks;
    hooks.observers = {&summaries};
    absl::StatusOr<Analysis> analysis = AnalyzeTraces(inputs.traces, options, hooks);
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

absl::StatusOr<Analysis> AnalysisFromJobSummaries(const JobInputs& inputs,
                                                  const AnalysisOptions& options) {
  absl::StatusOr<std::vector<RankSummary>> ranks = AllSummaries(inputs, options);
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
  a.notes.push_back(
      "given summaries (gsanalyze summarize): the per-rank table and straggler only; the other "
      "sections need the traces");
  return a;
}

}  // namespace gs::analyzer
