// chrome_trace_writer.h — writes the Chrome trace-event JSON format (the "JSON Object Format" of
// Google's Trace Event Format document, which Perfetto UI and chrome://tracing load) to a stream,
// as the events come, in pieces of 64 KiB, so that exporting a big trace never holds its events in
// memory.
//
// Times are given in nanoseconds and written as microseconds with three decimals (exact), less a
// time origin that a dialect may set (Kineto's timestamps are relative to "baseTimeNanoseconds").
// The members around "traceEvents" are the dialect's (Chrome: displayTimeUnit; Kineto: schema
// version, distributedInfo, deviceProperties, base time).
// Thread safety: none. Lifetimes: `out` outlives the writer; call Close() once at the end.
#ifndef GPUSTALL_ANALYZER_EXPORT_CHROME_TRACE_WRITER_H_
#define GPUSTALL_ANALYZER_EXPORT_CHROME_TRACE_WRITER_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

namespace gs::analyzer {

// `s` as a JSON string literal, quotes included (Json::AppendQuoted's escapes).
std::string JsonQuote(std::string_view s);

class ChromeTraceWriter {
 public:
  // `leading_members`: JSON object members written before "traceEvents" ("\"k\":v,..."; may be "").
  explicit ChromeTraceWriter(std::ostream* out,
                             std::string_view leading_members = "\"displayTimeUnit\":\"ns\"");

  // Subtracted from every event timestamp written from now on (metadata events stay at 0).
  void set_time_origin(int64_t origin_ns) { origin_ns_ = origin_ns; }

  // ph "M": process_name / thread_name / *_sort_index.
  void ProcessName(int64_t pid, std::string_view name);
  void ThreadName(int64_t pid, int64_t tid, std::string_view name);
  void ThreadSortIndex(int64_t pid, int64_t tid, int64_t index);
  void ProcessSortIndex(int64_t pid, int64_t index);
  // ph "X". `args_json` is "" or a JSON object literal ("{...}").
  void Complete(int64_t pid, int64_t tid, int64_t ts_ns, int64_t dur_ns, std::string_view name,
                std::string_view category, std::string_view args_json = "");
  // ph "C": a counter's value from `ts_ns` on; `args_json` ("{...}") holds its series by name.
  void Counter(int64_t pid, int64_t ts_ns, std::string_view name, std::string_view args_json);
  // A flow arrow from the slice enclosing (pid_s, tid_s, ts_s_ns) to the slice enclosing
  // (pid_f, tid_f, ts_f_ns): one ph "s" and one ph "f" (bp "e") event with the same id.
  void Flow(uint64_t id, int64_t pid_s, int64_t tid_s, int64_t ts_s_ns, int64_t pid_f, int64_t tid_f,
            int64_t ts_f_ns, std::string_view name, std::string_view category = "launch");
  // Ends the array, writes `trailing_members` (as leading_members; may be "") and ends the object.
  // Returns false when the stream failed.
  bool Close(std::string_view trailing_members = "");
  uint64_t events() const { return events_; }

 private:
  // Begin starts the next event at the end of event_ (its separator first); End writes event_ to
  // the stream once it holds enough (a stream insertion per field was most of an export's time);
  // Write writes what it holds.
  void Begin();
  void End();
  void Write();
  void AppendMicros(int64_t ns);  // ns -> "µs.nnn" (exact; no floating point)
  std::ostream& out_;
  std::string event_;  // events not written yet, the last one perhaps being assembled
  int64_t origin_ns_ = 0;
  uint64_t events_ = 0;
  bool closed_ = false;
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_EXPORT_CHROME_TRACE_WRITER_H_
