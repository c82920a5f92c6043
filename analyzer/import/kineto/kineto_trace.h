// kineto_trace.h — PyTorch profiler (Kineto) Chrome-trace JSON, plain or gzip, into the model.
//
//   auto t = gs::analyzer::kineto::KinetoTrace::Open("rank0.pt.trace.json.gz");
//   if (!t.ok()) return t.status();     // not JSON, not a Kineto trace, no GPU work: one line
//   (*t)->ReadAll(&analyzer);           // records in time order
//
// What becomes what (both dialects: PyTorch 1.8-1.10's categories first, 2.x's second):
//   Kernel / kernel                     GpuActivity kKernel (kCollective for nccl* kernels)
//   Memcpy / gpu_memcpy                 kMemcpy; direction and pageable/pinned from the name,
//                                       "Memcpy HtoD (Pageable -> Device)"
//   Memset / gpu_memset                 kMemset
//   cuda_sync                           kSync (CUPTI's synchronisation records)
//   Runtime / cuda_runtime, cuda_driver ApiCall; class from the name (api_names.h), copy
//                                       direction, bytes, stream and device from the device
//                                       work with the same correlation id (a synchronisation's
//                                       stream and device from its cuda_sync record)
//   Operator / cpu_op, user_annotation, python_function (incl. ProfilerStep#N, whose frame is
//                                       "ProfilerStep#*": one stack for every step's same code)
//                                       the host "stack": their nesting on the calling thread.
//                                       Each runtime call carries the stack open at its start,
//                                       and samples at every change of the nesting let host work
//                                       outside calls be charged to what was open then. The
//                                       samples have no thread state (UNKNOWN): Kineto has none.
//   thread_name metadata                thread names
//   deviceProperties, distributedInfo   TraceInfo devices (name, memory), rank
// Flows (ac2g, async "launch") are not needed: 1.8 and later put the correlation id in args.
// ROCm traces use the 2.x categories with hip* names and are read the same way.
//
// Clock: Kineto writes microseconds (fractions down to ns since 2.x), absolute or relative to
// baseTimeNanoseconds; records use ts * 1000 as nanoseconds on one clock, as they are.
//
// Memory: the JSON is streamed (RapidJSON's SAX reader over zlib, 1 MiB buffer); Open keeps the
// events it needs as fixed-size records (32-56 bytes each, against 200-500 bytes of JSON per
// event) plus interned names and stacks; ReadAll adds two nesting samples per op on the threads
// that call CUDA. Peak: about 130 bytes per event and a quarter of the uncompressed JSON (measured:
// 268 MiB peak RSS for a 1.05 GB trace of 2.16 M events, BENCHMARKS.md), never the JSON or a DOM.
//
// Open reads the whole file (so that a file that is not a trace is an error before any output);
// ReadAll only sorts and delivers.
//
// Damage: a file cut (or garbled) after GPU work was read is analysed as far as it was read and
// DamageWarning() says how much. Events whose times cannot be real (more than 14 days from the
// densest GPU work, as the .gstrace importer bounds records, lasting over 7 days, or beyond ±146
// years) are dropped and counted: DamageWarning() says how many, info().losses.other_dropped
// counts them. A file that is not JSON, not a Chrome trace, or has no GPU work with usable
// timestamps is an error from Open.
//
// Thread safety: none.
#ifndef GPUSTALL_ANALYZER_IMPORT_KINETO_KINETO_TRACE_H_
#define GPUSTALL_ANALYZER_IMPORT_KINETO_KINETO_TRACE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "analyzer/model/imported_trace.h"
#include "analyzer/model/trace_tables.h"
#include "analyzer/model/types.h"

namespace gs::analyzer::kineto {

// True when the content (after gunzip, if gzip) starts with '{' or '[' — JSON, which a .gstrace
// never does. HeadLooksLikeJson looks at a file's first bytes (a few KiB; what the one pass read
// from its descriptor); LooksLikeJson opens the file by name (tests and tools only: gsanalyze
// opens a trace in the one pass only).
bool HeadLooksLikeJson(absl::string_view head);
bool LooksLikeJson(const std::string& path);
// Stricter: a JSON object that names "traceEvents" in its first MiB (after gunzip), as every
// Kineto trace does. By name, for tests and tools: gsanalyze takes a folder's traces by name
// (*.json, *.json.gz; a job's truth-r0.jsonl is not one) and opens them in the one pass only.
bool LooksLikeKinetoTrace(const std::string& path);

// What the trace held, counted as read (tests compare these with the JSON's own sums).
struct KinetoCounts {
  uint64_t events = 0;            // trace events read (all kinds)
  uint64_t kernels = 0, memcpys = 0, memsets = 0, syncs = 0;
  uint64_t runtime_calls = 0;     // cuda_runtime + cuda_driver (Runtime)
  uint64_t host_ranges = 0;       // cpu_op, user_annotation, python_function (Operator)
  uint64_t steps = 0;             // ProfilerStep#N ranges
  uint64_t samples = 0;           // nesting samples delivered by ReadAll
  uint64_t dropped = 0;           // events whose times cannot be real: lasting less than none
                                  // or over 7 days, or more than 14 days from the GPU work
  uint64_t bad_times = 0;         // events whose ts is not microseconds within ±146 years
  bool legacy_dialect = false;    // PyTorch 1.8-1.10 categories seen
};

class KinetoTrace final : public ImportedTrace {
 public:
  // Called while the file is parsed, after each buffer, with the bytes of the file read so far
  // (compressed bytes for gzip, as the file's size counts them): a progress line, since the parse
  // is most of the time a large trace takes.
  using Progress = std::function<void(uint64_t bytes_read)>;
  // Open: by name (tests, tools). FromFd: over a descriptor open for reading at offset 0, owned
  // from here on (the one pass, analysis/analyze_traces.cc, via import/open_imported.h).
  static absl::StatusOr<std::unique_ptr<KinetoTrace>> Open(const std::string& path);
  static absl::StatusOr<std::unique_ptr<KinetoTrace>> FromFd(int fd, const std::string& path,
                                                             const Progress& progress = nullptr);
  // The same over JSON (or gzip) bytes in memory; `name` stands for the path.
  static absl::StatusOr<std::unique_ptr<KinetoTrace>> FromBuffer(const std::string& bytes,
                                                                 const std::string& name);
  ~KinetoTrace() override;

  absl::Status ReadAll(RecordSink* sink) override;
  const TraceInfo& info() const override { return info_; }
  const TraceTables& tables() const override { return tables_; }
  std::string DamageWarning() const override { return damage_; }
  uint64_t file_bytes() const override { return file_bytes_; }
  const KinetoCounts& counts() const { return counts_; }

  // Compact forms of the events kept between Open and ReadAll (public for the parser in the .cc).
  struct HostRange {              // an op / annotation / Python frame on a host thread
    TimeNs start, end;
    uint64_t tid;
    uint32_t frame;               // InMemoryTables frame id
  };
  struct Call {                   // a runtime/driver call
    TimeNs start, end;
    uint64_t tid;
    uint32_t function;            // InMemoryTables function id
    uint32_t correlation;         // the JSON's, or renumbered where ids exceed 32 bits (the .cc)
  };

 private:
  class Parser;
  KinetoTrace() = default;
  absl::Status Finish();          // after the parse: checks, sorting, stacks

  std::string path_;
  TraceInfo info_;
  InMemoryTables tables_;
  KinetoCounts counts_;
  std::string damage_;
  uint64_t file_bytes_ = 0;
  int64_t base_time_ns_ = 0;       // baseTimeNanoseconds (0: ts are absolute or unanchored)
  int64_t world_size_ = 0;         // distributedInfo.world_size (0: not given)
  std::vector<HostRange> ranges_;
  std::vector<Call> calls_;
  std::vector<GpuActivity> activities_;
  bool read_ = false;
};

}  // namespace gs::analyzer::kineto

#endif  // GPUSTALL_ANALYZER_IMPORT_KINETO_KINETO_TRACE_H_
