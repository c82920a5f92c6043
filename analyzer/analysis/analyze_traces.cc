#include "analyzer/analysis/analyze_traces.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <utility>

#include "analyzer/analysis/trace_analyzer.h"
#include "analyzer/import/open_imported.h"
#include "analyzer/model/importer.h"
#include "analyzer/result/analysis_builder.h"

namespace gs::analyzer {

namespace {

// Decoding is about a third of a pass (BENCHMARKS.md), so one decode thread already outruns the
// analysis thread; more only hold more frames in memory (two each), so a machine with many cores
// gets no more than this.
constexpr int kMaxDecodeThreads = 2;

// One trace's model records on their way to the analysis: each observer's sink first, then the
// analysis, record by record (as the HTML timeline recorded them when it sat in front).
class FanOutSink final : public RecordSink {
 public:
  FanOutSink(std::vector<RecordSink*> observers, RecordSink* analysis)
      : observers_(std::move(observers)), analysis_(analysis) {}
  void OnApiCall(const ApiCall& call) override {
    for (RecordSink* s : observers_) s->OnApiCall(call);
    analysis_->OnApiCall(call);
  }
  void OnActivity(const GpuActivity& activity) override {
    for (RecordSink* s : observers_) s->OnActivity(activity);
    analysis_->OnActivity(activity);
  }
  void OnSample(const Sample& sample) override {
    for (RecordSink* s : observers_) s->OnSample(sample);
    analysis_->OnSample(sample);
  }
  void OnMemoryEvent(const MemoryEvent& event) override {
    for (RecordSink* s : observers_) s->OnMemoryEvent(event);
    analysis_->OnMemoryEvent(event);
  }
  void OnNvtxRange(const NvtxRange& range) override {
    for (RecordSink* s : observers_) s->OnNvtxRange(range);
    analysis_->OnNvtxRange(range);
  }
  void OnHostWait(const HostWait& wait) override {
    for (RecordSink* s : observers_) s->OnHostWait(wait);
    analysis_->OnHostWait(wait);
  }

 private:
  std::vector<RecordSink*> observers_;
  RecordSink* analysis_;
};

// The trace behind `file` (opened once, its first bytes read without moving the offset): those
// bytes say which importer reads it, over the same descriptor — a PyTorch profiler JSON, plain or
// gzip (analyzer/import/), or else a .gstrace (whose reader says what is wrong with anything else).
// An imported trace is read whole here: `progress` reports its reading as it goes. A .gstrace is
// decoded by `options.jobs` - 1 threads besides this one, at most kMaxDecodeThreads.
absl::StatusOr<std::unique_ptr<TraceImporter>> OpenTrace(TraceFile file, const AnalysisOptions& options,
                                                         const std::function<void(uint64_t)>& progress) {
  if (IsImportedTrace(file.head())) {
    absl::StatusOr<std::unique_ptr<ImportedTrace>> imported = OpenImported(file.Release(), file.path(), progress);
    if (!imported.ok()) return imported.status();
    return TraceImporter::FromImported(std::move(*imported));
  }
  // A read error shows here, as the reader words it.
  return TraceImporter::FromFd(file.Release(), file.path(),
                               std::clamp(options.jobs - 1, 0, kMaxDecodeThreads));
}

// The pass over `count` traces, each opened by `open(i)` when its turn comes (one descriptor held
// at a time when they are opened here; the job intake hands over files it opened already).
absl::StatusOr<Analysis> AnalyzeEach(size_t count, const std::function<absl::StatusOr<TraceFile>(size_t)>& open,
                                     const AnalysisOptions& options, const AnalyzeHooks& hooks) {
  AnalysisBuilder builder(options);
  for (size_t i = 0; i < count; ++i) {
    absl::StatusOr<TraceFile> file = open(i);
    if (!file.ok()) return file.status();
    struct stat st {};
    const uint64_t size = hooks.progress && ::fstat(file->fd(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
    std::function<void(uint64_t)> progress;
    if (hooks.progress) progress = [&hooks, i, size](uint64_t read) { hooks.progress(i, read, size); };
    auto importer = OpenTrace(std::move(*file), options, progress);
    if (!importer.ok()) return importer.status();
    if (progress) (*importer)->set_progress(progress);
    if (absl::Status s = AnalyzeTrace(importer->get(), options, &builder, i, hooks.observers); !s.ok()) return s;
  }
  return builder.Build();
}

}  // namespace

absl::StatusOr<Analysis> AnalyzeTraces(const std::vector<std::string>& paths,
                                       const AnalysisOptions& options) {
  return AnalyzeTraces(paths, options, AnalyzeHooks());
}

absl::Status AnalyzeTrace(TraceImporter* importer, const AnalysisOptions& options, AnalysisBuilder* builder,
                          size_t index, const std::vector<TraceObserver*>& observers) {
  TraceAnalyzer analyzer(options, importer->tables());
  if (importer->info().nvtx) analyzer.ExpectNvtx();
  analyzer.ExpectProfilerSteps(importer->info().profiler_steps);
  std::vector<RecordSink*> record_observers;
  for (TraceObserver* o : observers) {
    o->BeginTrace(index, *importer, analyzer);
    if (RecordSink* s = o->records(); s != nullptr) record_observers.push_back(s);
  }
  if (!observers.empty()) {
    analyzer.set_interval_observer([&observers](uint32_t device, const IntervalVerdict& v) {
      for (TraceObserver* o : observers) o->OnIdleInterval(device, v);
    });
    importer->set_chunk_observer([&observers](const reader::ChunkEvents& events, const reader::InternTables& tables) {
      for (TraceObserver* o : observers) o->OnChunk(events, tables);
    });
  }
  FanOutSink fan_out(std::move(record_observers), &analyzer);
  absl::Status read = importer->ReadAll(observers.empty() ? static_cast<RecordSink*>(&analyzer) : &fan_out);
  importer->set_chunk_observer(nullptr);
  if (!read.ok()) return read;
  std::string warning = importer->DamageWarning();
  if (!warning.empty()) builder->AddWarning(std::move(warning));
  TraceResult result = analyzer.Finish(importer->info());
  for (TraceObserver* o : observers) o->EndTrace(index, *importer, result);
  builder->AddTrace(std::move(result));
  return absl::OkStatus();
}

absl::StatusOr<Analysis> AnalyzeTraces(const std::vector<std::string>& paths, const AnalysisOptions& options,
                                       const AnalyzeHooks& hooks) {
  return AnalyzeEach(paths.size(), [&paths](size_t i) { return TraceFile::Open(paths[i]); }, options, hooks);
}

absl::StatusOr<Analysis> AnalyzeTraces(std::vector<TraceFile> files, const AnalysisOptions& options,
                                       const AnalyzeHooks& hooks) {
  return AnalyzeEach(files.size(), [&files](size_t i) { return std::move(files[i]); }, options, hooks);
}

}  // namespace gs::analyzer
