// dump.h — `gsanalyze dump TRACE`: every record of a trace as text, for humans and debugging.
//
// Output: '#' comment lines (file, versions, summary), then the header as `header.<field>` lines,
// then, per chunk, the definitions it adds and one line per record in file order, e.g.
//   api t=1234567890 tid=42 cudaMemcpyAsync class=MEMCPY dur=5123 corr=17 bytes=4096 ...
//        stack=#3 [load_batch (workload.cc:42) <- train_step <- main]
//   gpu t=1234569000 dur=80000 dev=0 stream=7 KERNEL src=CUPTI corr=17 name="gemm_kernel"
// Timestamps are CLOCK_MONOTONIC nanoseconds as recorded (not relative), so lines can be matched
// with other tools' logs. Damage is printed inline as `damage @OFFSET (N bytes): why`.
//
// Thread safety: DumpTrace reads one file and writes `out`; concurrent calls on different
// streams are independent.
#ifndef GPUSTALL_ANALYZER_READER_DUMP_H_
#define GPUSTALL_ANALYZER_READER_DUMP_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "analyzer/reader/trace_reader.h"

namespace gs::reader {

// Prints the trace at `path`. Returns the error that makes the file unreadable (not a trace,
// newer version, truncated header, I/O error); damage later in the file is printed, not returned.
// `options` choose how it is read (the text is the same whatever they say).
absl::Status DumpTrace(const std::string& path, std::ostream& out, ReaderOptions options = {});

}  // namespace gs::reader

#endif  // GPUSTALL_ANALYZER_READER_DUMP_H_
