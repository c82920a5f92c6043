#include "analyzer/analysis/analyze_traces.h"

#include "analyzer/analysis/analysis_builder.h"
#include "analyzer/analysis/trace_analyzer.h"
#include "analyzer/model/importer.h"

namespace gs::analyzer {

absl::StatusOr<Analysis> AnalyzeTraces(const std::vector<std::string>& paths,
                                       const AnalysisOptions& options) {
  AnalysisBuilder builder(options);
  for (const std::string& path : paths) {
    auto importer = TraceImporter::Open(path);
    if (!importer.ok()) return importer.status();
    TraceAnalyzer analyzer(options, (*importer)->tables());
    absl::Status read = (*importer)->ReadAll(&analyzer);
    if (!read.ok()) return read;
    std::string warning = (*importer)->DamageWarning();
    if (!warning.empty()) builder.AddWarning(std::move(warning));
    builder.AddTrace(analyzer.Finish((*importer)->info()));
  }
  return builder.Build();
}

}  // namespace gs::analyzer
