#include "analyzer/analysis/analyze_traces.h"

#include <sys/stat.h>
#include <cinttypes>
#include <cstdio>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/synchronization/mutex.h"
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
  bool empty() const { return observers_.empty(); }
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
  void OnGraphNode(const GraphNode& node) override {
    for (RecordSink* s : observers_) s->OnGraphNode(node);
    analysis_->OnGraphNode(node);
  }
  void OnGraphKernel(uint64_t node, const GpuActivity& kernel) override {
    for (RecordSink* s : observers_) s->OnGraphKernel(node, kernel);
    analysis_->OnGraphKernel(node, kernel);
  }
  void OnDevice(const DeviceDescription& device) override {
    for (RecordSink* s : observers_) s->OnDevice(device);
    analysis_->OnDevice(device);
  }

 private:
  std::vector<RecordSink*> observers_;
  RecordSink* analysis_;
};

// The trace behind `file` (opened once, its first bytes read without moving the offset): those
// bytes say which importer reads it, over the same descriptor — a PyTorch profiler JSON, plain or
// gzip (analyzer/import/), or else a .gstrace (whose reader says what is wrong with anything else).
// An imported trace is read whole here: `progress` reports its reading as it goes. A .gstrace is
// decoded by `decode_threads` threads besides this one.
absl::StatusOr<std::unique_ptr<TraceImporter>> OpenTrace(TraceFile file, int decode_threads,
                                                         const std::function<void(uint64_t)>& progress) {
  if (IsImportedTrace(file.head())) {
    absl::StatusOr<std::unique_ptr<ImportedTrace>> imported = OpenImported(file.Release(), file.path(), progress);
    if (!imported.ok()) return imported.status();
    return TraceImporter::FromImported(std::move(*imported));
  }
  // A read error shows here, as the reader words it.
  return TraceImporter::FromFd(file.Release(), file.path(), decode_threads);
}

// Trace `index` (what AnalyzeTrace does, its damage warning, if any, left in `warning` for the
// caller to add in input order).
absl::StatusOr<TraceResult> AnalyzeOne(TraceImporter* importer, const AnalysisOptions& options, size_t index,
                                       const std::vector<TraceObserver*>& observers, std::string* warning) {
  TraceAnalyzer analyzer(options, importer->tables());
  if (importer->info().nvtx) analyzer.ExpectNvtx();
  analyzer.ExpectProfilerSteps(importer->info().profiler_steps);
  analyzer.SetDevices(importer->info().devices);
  std::vector<RecordSink*> record_observers;
  for (TraceObserver* o : observers) {
    o->BeginTrace(index, *importer, analyzer);
    if (RecordSink* s = o->records(); s != nullptr) record_observers.push_back(s);
  }
  if (!observers.empty()) {
    analyzer.set_interval_observer([&observers](uint32_t device, const IntervalVerdict& v) {
      for (TraceObserver* o : observers) o->OnIdleInterval(device, v);
    });
    analyzer.set_fill_observer([&observers](uint32_t device, const FillPiece& piece) {
      for (TraceObserver* o : observers) o->OnFillPiece(device, piece);
    });
    importer->set_chunk_observer([&observers](const reader::ChunkEvents& events, const reader::InternTables& tables) {
      for (TraceObserver* o : observers) o->OnChunk(events, tables);
    });
  }
  FanOutSink fan_out(std::move(record_observers), &analyzer);
  // Straight to the analysis when no observer takes records (a virtual call less per record).
  absl::Status read = importer->ReadAll(fan_out.empty() ? static_cast<RecordSink*>(&analyzer) : &fan_out);
  importer->set_chunk_observer(nullptr);
  if (!read.ok()) return read;
  *warning = importer->DamageWarning();
  TraceResult result = analyzer.Finish(importer->info());
  for (TraceObserver* o : observers) o->EndTrace(index, *importer, result);
  return result;
}

using OpenFile = std::function<absl::StatusOr<TraceFile>(size_t)>;
// Trace i's file size in bytes (0 when unknown), for the memory bound of a concurrent pass.
using FileSize = std::function<uint64_t(size_t)>;

// AnalysisOptions::trace_memory_budget, or half of MemAvailable, or no bound.
uint64_t TraceMemoryBudget(const AnalysisOptions& options) {
  if (options.trace_memory_budget != 0) return options.trace_memory_budget;
  FILE* f = fopen("/proc/meminfo", "re");
  if (f == nullptr) return UINT64_MAX;
  char line[256];
  uint64_t kib = 0;
  while (fgets(line, sizeof(line), f) != nullptr) {
    if (sscanf(line, "MemAvailable: %" SCNu64 " kB", &kib) == 1) break;
  }
  fclose(f);
  return kib != 0 ? kib * 1024 / 2 : UINT64_MAX;
}

// Trace `i` from its opening to its result.
absl::StatusOr<TraceResult> OpenAndAnalyze(size_t i, const OpenFile& open, const AnalysisOptions& options,
                                           int decode_threads, const AnalyzeProgress& progress,
                                           const std::vector<TraceObserver*>& observers, std::string* warning) {
  absl::StatusOr<TraceFile> file = open(i);
  if (!file.ok()) return file.status();
  struct stat st {};
  const uint64_t size = progress && ::fstat(file->fd(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  std::function<void(uint64_t)> file_progress;
  if (progress) file_progress = [&progress, i, size](uint64_t read) { progress(i, read, size); };
  auto importer = OpenTrace(std::move(*file), decode_threads, file_progress);
  if (!importer.ok()) return importer.status();
  if (file_progress) (*importer)->set_progress(file_progress);
  return AnalyzeOne(importer->get(), options, i, observers, warning);
}

// Several traces read at once, `window` of them at most (opened, being read, or read and waiting
// for an earlier one), each on a thread of its own with its own observer forks; what each leaves
// is merged on this thread in input order — the builder gets the same calls in the same order as
// from one trace after another, so the Analysis (and every report rendered from it) is the same.
// A trace's own analysis stays on one thread, so the traces' results do not depend on how they
// were spread. The first trace in input order that fails stops the pass with its error, as one
// trace after another would; traces after it that were in flight are read to their end and
// dropped (the reader cannot be stopped midway).
class ConcurrentPass {
 public:
  ConcurrentPass(size_t count, const OpenFile& open, const FileSize& size_of, const AnalysisOptions& options,
                 const AnalyzeHooks& hooks, size_t window, int decode_threads)
      : open_(open), size_of_(size_of), options_(options), hooks_(hooks), window_(window),
        decode_threads_(decode_threads), budget_(TraceMemoryBudget(options)), slots_(count) {
    // Progress calls come from the reading threads, one at a time (a progress line is not shared).
    if (hooks.progress) {
      progress_ = [this](size_t i, uint64_t read, uint64_t size) {
        absl::MutexLock l(&progress_mu_);
        hooks_.progress(i, read, size);
      };
    }
  }

  // `first_forks`: trace 0's observer forks, one per hooks.observers entry.
  absl::StatusOr<Analysis> Run(std::vector<std::unique_ptr<TraceObserver>> first_forks) {
    slots_[0].forks = std::move(first_forks);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < window_; ++t) threads.emplace_back([this] { Work(); });
    AnalysisBuilder builder(options_);
    absl::Status error;
    size_t queued = 0;
    uint64_t in_flight = 0;  // estimated memory of the traces queued and not merged yet
    for (size_t i = 0; i < slots_.size(); ++i) {
      for (; queued < slots_.size() && queued < i + window_; ++queued) {
        Slot& next = slots_[queued];
        // Trace i, the next to merge, always runs (nothing could free memory for it otherwise).
        next.memory = size_of_(queued) * kTraceMemoryPerFileByte;
        if (queued > i && in_flight + next.memory > budget_) break;
        in_flight += next.memory;
        if (queued > 0) {
          for (TraceObserver* o : hooks_.observers) next.forks.push_back(o->Fork(queued));
        }
        absl::MutexLock l(&mu_);
        queue_.push_back(queued);
      }
      Slot& slot = slots_[i];
      {
        absl::MutexLock l(&mu_);
        mu_.Await(absl::Condition(&slot.done));
      }
      if (!slot.result.ok()) {
        error = slot.result.status();
        break;
      }
      for (size_t k = 0; k < hooks_.observers.size(); ++k) hooks_.observers[k]->Join(i, std::move(slot.forks[k]));
      if (!slot.warning.empty()) builder.AddWarning(std::move(slot.warning));
      builder.AddTrace(*std::move(slot.result));
      slot.result = absl::CancelledError();  // its memory goes now, not with the pass
      in_flight -= slot.memory;
    }
    {
      absl::MutexLock l(&mu_);
      stop_ = true;
      queue_.clear();
    }
    for (std::thread& t : threads) t.join();
    if (!error.ok()) return error;
    return builder.Build();
  }

 private:
  // One trace's part, written by the thread that reads it until `done`, then by the merge.
  struct Slot {
    std::vector<std::unique_ptr<TraceObserver>> forks;
    std::string warning;
    absl::StatusOr<TraceResult> result;
    uint64_t memory = 0;  // its estimated memory while in flight (the merge thread's)
    bool done = false;  // under mu_
  };

  bool HasWorkOrStop() const { return stop_ || !queue_.empty(); }

  void Work() {
    while (true) {
      size_t i;
      {
        absl::MutexLock l(&mu_);
        mu_.Await(absl::Condition(this, &ConcurrentPass::HasWorkOrStop));
        if (queue_.empty()) return;  // stopped
        i = queue_.front();
        queue_.pop_front();
      }
      Slot& slot = slots_[i];
      std::vector<TraceObserver*> observers;
      for (const std::unique_ptr<TraceObserver>& f : slot.forks) observers.push_back(f.get());
      slot.result = OpenAndAnalyze(i, open_, options_, decode_threads_, progress_, observers, &slot.warning);
      absl::MutexLock l(&mu_);
      slot.done = true;
    }
  }

  const OpenFile& open_;
  const FileSize& size_of_;
  const AnalysisOptions& options_;
  const AnalyzeHooks& hooks_;
  const size_t window_;
  const int decode_threads_;
  const uint64_t budget_;
  AnalyzeProgress progress_;
  absl::Mutex progress_mu_;
  std::vector<Slot> slots_;
  absl::Mutex mu_;
  std::deque<size_t> queue_;  // traces whose turn has come, not yet taken by a thread
  bool stop_ = false;
};

// The pass over `count` traces, each opened by `open(i)` when its turn comes (a descriptor held
// per trace in flight when they are opened here; the job intake hands over files it opened
// already). With `options.jobs` > 1 and several traces, up to `jobs` traces are read at once
// (ConcurrentPass) if every observer can be forked; otherwise one after another, with `jobs` - 1
// decode threads (at most kMaxDecodeThreads) for each trace.
absl::StatusOr<Analysis> AnalyzeEach(size_t count, const OpenFile& open, const FileSize& size_of,
                                     const AnalysisOptions& options, const AnalyzeHooks& hooks) {
  const int jobs = std::max(options.jobs, 1);
  if (jobs > 1 && count > 1) {
    std::vector<std::unique_ptr<TraceObserver>> forks;
    for (TraceObserver* o : hooks.observers) {
      forks.push_back(o->Fork(0));
      if (forks.back() == nullptr) break;
    }
    if (forks.empty() || forks.back() != nullptr) {
      // The threads go to traces first (each trace's analysis is one thread's work); what is left
      // over decodes ahead of them.
      const size_t window = std::min(count, static_cast<size_t>(jobs));
      const int decode_threads = std::clamp(jobs / static_cast<int>(window) - 1, 0, kMaxDecodeThreads);
      ConcurrentPass pass(count, open, size_of, options, hooks, window, decode_threads);
      return pass.Run(std::move(forks));
    }
  }
  const int decode_threads = std::clamp(jobs - 1, 0, kMaxDecodeThreads);
  AnalysisBuilder builder(options);
  for (size_t i = 0; i < count; ++i) {
    std::string warning;
    absl::StatusOr<TraceResult> result =
        OpenAndAnalyze(i, open, options, decode_threads, hooks.progress, hooks.observers, &warning);
    if (!result.ok()) return result.status();
    if (!warning.empty()) builder.AddWarning(std::move(warning));
    builder.AddTrace(*std::move(result));
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
  std::string warning;
  absl::StatusOr<TraceResult> result = AnalyzeOne(importer, options, index, observers, &warning);
  if (!result.ok()) return result.status();
  if (!warning.empty()) builder->AddWarning(std::move(warning));
  builder->AddTrace(*std::move(result));
  return absl::OkStatus();
}

absl::StatusOr<Analysis> AnalyzeTraces(const std::vector<std::string>& paths, const AnalysisOptions& options,
                                       const AnalyzeHooks& hooks) {
  const FileSize size_of = [&paths](size_t i) -> uint64_t {
    struct stat st;
    return stat(paths[i].c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  };
  return AnalyzeEach(paths.size(), [&paths](size_t i) { return TraceFile::Open(paths[i]); }, size_of, options,
                     hooks);
}

absl::StatusOr<Analysis> AnalyzeTraces(std::vector<TraceFile> files, const AnalysisOptions& options,
                                       const AnalyzeHooks& hooks) {
  // Sizes before any file is handed over (moved out) to its reader.
  std::vector<uint64_t> sizes(files.size(), 0);
  for (size_t i = 0; i < files.size(); ++i) {
    struct stat st;
    if (files[i].fd() >= 0 && fstat(files[i].fd(), &st) == 0) sizes[i] = static_cast<uint64_t>(st.st_size);
  }
  const FileSize size_of = [&sizes](size_t i) { return sizes[i]; };
  return AnalyzeEach(files.size(), [&files](size_t i) { return std::move(files[i]); }, size_of, options, hooks);
}

}  // namespace gs::analyzer
