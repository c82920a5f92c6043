#include "analyzer/analysis/analyze_traces.h"

#include <sys/stat.h>

#include "analyzer/analysis/analysis_builder.h"
#include "analyzer/analysis/trace_analyzer.h"
#include "analyzer/model/importer.h"

namespace gs::analyzer {

absl::StatusOr<Analysis> AnalyzeTraces(const std::vector<std::string>& paths,
                                       const AnalysisOptions& options) {
  return AnalyzeTraces(paths, options, AnalyzeProgress());
}

absl::StatusOr<Analysis> AnalyzeTraces(const std::vector<std::string>& paths, const AnalysisOptions& options,
                                       const AnalyzeProgress& progress) {
  AnalysisBuilder builder(options);
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string& path = paths[i];
    auto importer = TraceImporter::Open(path);
    if (!importer.ok()) return importer.status();
    if (progress) {
      struct stat st {};
      const uint64_t size = ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
      (*importer)->set_progress([&progress, i, size](uint64_t read) { progress(i, read, size); });
    }
    TraceAnalyzer analyzer(options, (*importer)->tables());
    if ((*importer)->info().nvtx) analyzer.ExpectNvtx();
    absl::Status read = (*importer)->ReadAll(&analyzer);
    if (!read.ok()) return read;
    std::string warning = (*importer)->DamageWarning();
    if (!warning.empty()) builder.AddWarning(std::move(warning));
    builder.AddTrace(analyzer.Finish((*importer)->info()));
  }
  return builder.Build();
}

}  // namespace gs::analyzer
