#include "analyzer/analysis/analyze_traces.h"

#include <sys/stat.h>

#include "analyzer/result/analysis_builder.h"
#include "analyzer/analysis/trace_analyzer.h"
#include "analyzer/model/importer.h"

namespace gs::analyzer {

absl::StatusOr<Analysis> AnalyzeTraces(const std::vector<std::string>& paths,
                                       const AnalysisOptions& options) {
  return AnalyzeTraces(paths, options, AnalyzeHooks());
}

absl::Status AnalyzeTrace(TraceImporter* importer, const AnalysisOptions& options, AnalysisBuilder* builder,
                          size_t index, TraceWatcher* watcher) {
  TraceAnalyzer analyzer(options, importer->tables());
  if (importer->info().nvtx) analyzer.ExpectNvtx();
  RecordSink* sink = watcher != nullptr ? watcher->BeginTrace(index, *importer, &analyzer) : nullptr;
  absl::Status read = importer->ReadAll(sink != nullptr ? sink : &analyzer);
  if (!read.ok()) return read;
  std::string warning = importer->DamageWarning();
  if (!warning.empty()) builder->AddWarning(std::move(warning));
  builder->AddTrace(analyzer.Finish(importer->info()));
  if (watcher != nullptr) watcher->EndTrace(index, *importer);
  return absl::OkStatus();
}

absl::StatusOr<Analysis> AnalyzeTraces(const std::vector<std::string>& paths, const AnalysisOptions& options,
                                       const AnalyzeHooks& hooks) {
  AnalysisBuilder builder(options);
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string& path = paths[i];
    auto importer = TraceImporter::Open(path);
    if (!importer.ok()) return importer.status();
    if (hooks.progress) {
      struct stat st {};
      const uint64_t size = ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
      (*importer)->set_progress([&hooks, i, size](uint64_t read) { hooks.progress(i, read, size); });
    }
    if (absl::Status s = AnalyzeTrace(importer->get(), options, &builder, i, hooks.watcher); !s.ok()) return s;
  }
  return builder.Build();
}

}  // namespace gs::analyzer
