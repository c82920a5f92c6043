// trace_observer.h — what watches the one pass over each trace.
//
// AnalyzeTraces (analyze_traces.h) is the only code in gsanalyze that opens and reads trace
// files. Everything else that needs a trace — the per-rank summaries (summary/), the trace-event
// exports and the tables (export/), the HTML report's timeline (report/html/) — registers a
// TraceObserver on that pass instead of reading the file again, so a job's report reads each
// trace once however many views it asks for.
//
// What an observer sees of trace `index`, in this order:
//   BeginTrace      the trace is open: header, capture info and tables are in `importer`;
//                   `analyzer` is the analysis its records go to (for TraceAnalyzer::Evidence);
//   then chunk by chunk:
//     OnChunk       the chunk as the file holds it (raw records, before conversion), with the
//                   tables as they stand after it (a .gstrace only: a trace of another format,
//                   importer.imported(), has no chunks and no reader(); its records() are all);
//     records()     the chunk's model records, before the analysis sees them;
//     OnIdleInterval  each steady-state idle interval as the analysis classifies it;
//     OnFillPiece   how full a device's kernels kept it over a stretch of time, as the analysis
//                   integrates its fill figures (timeline/fill_timeline.h FillPiece; per device in
//                   time order; the last ones after the last chunk, before EndTrace);
//   EndTrace        the trace is read and analysed: its TraceResult; `importer` still lives.
// Observers are called in the order they were registered. Pointers handed to a call are valid
// during that call only, except `importer` and `analyzer`, which live from BeginTrace to EndTrace.
//
// Several traces at once (AnalysisOptions::jobs > 1, analyze_traces.h): the pass asks each
// observer to Fork() one of its own for each trace, calls that fork for the trace as above from
// the thread that reads it, and hands it back to Join() in input order once the trace and every
// earlier one are read. An observer whose Fork() returns nullptr (the default; the HTML timeline,
// report/html/timeline.h) keeps the pass to one trace after another.
//
// Thread safety: the pass calls an observer (Fork and Join included) from the thread that runs
// AnalyzeTraces only; a fork, from one thread at a time.
//
// How to add an observer: (1) subclass TraceObserver beside the view it feeds and override what
// it needs (the defaults ignore everything); (2) register it in AnalyzeHooks::observers where the
// command runs the pass (cli/); (3) a test beside it that runs AnalyzeTraces with it.
#ifndef GPUSTALL_ANALYZER_ANALYSIS_TRACE_OBSERVER_H_
#define GPUSTALL_ANALYZER_ANALYSIS_TRACE_OBSERVER_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "analyzer/classify/gap_classifier.h"
#include "analyzer/model/importer.h"
#include "analyzer/model/record_sink.h"
#include "analyzer/result/trace_result.h"
#include "analyzer/timeline/fill_timeline.h"

namespace gs::reader {
class InternTables;
struct ChunkEvents;
}  // namespace gs::reader

namespace gs::analyzer {

class TraceAnalyzer;

class TraceObserver {
 public:
  virtual ~TraceObserver() = default;

  virtual void BeginTrace(size_t index, const TraceImporter& importer, const TraceAnalyzer& analyzer) {
    (void)index, (void)importer, (void)analyzer;
  }
  virtual void OnChunk(const reader::ChunkEvents& events, const reader::InternTables& tables) {
    (void)events, (void)tables;
  }
  // Where this trace's model records go before the analysis, or nullptr (the default) for none.
  // Asked once per trace, after BeginTrace. The sink must not forward them: the pass delivers
  // every record to the analysis itself.
  virtual RecordSink* records() { return nullptr; }
  virtual void OnIdleInterval(uint32_t device, const IntervalVerdict& verdict) { (void)device, (void)verdict; }
  virtual void OnFillPiece(uint32_t device, const FillPiece& piece) { (void)device, (void)piece; }
  virtual void EndTrace(size_t index, const TraceImporter& importer, const TraceResult& result) {
    (void)index, (void)importer, (void)result;
  }

  // An observer for trace `index` alone, called from the thread that reads it while other traces
  // are read on others (it shares nothing with this one that is not read-only), or nullptr: this
  // observer sees traces only one after another (asked for trace 0 first: an observer that forks
  // that one must fork every one). Join gets it back once trace `index` is read
  // (EndTrace called on the fork), in input order; a fork that is not joined (a trace before it
  // failed) is dropped.
  virtual std::unique_ptr<TraceObserver> Fork(size_t index) {
    (void)index;
    return nullptr;
  }
  virtual void Join(size_t index, std::unique_ptr<TraceObserver> fork) { (void)index, (void)fork; }
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_ANALYSIS_TRACE_OBSERVER_H_
