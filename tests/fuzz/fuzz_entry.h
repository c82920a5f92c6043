// fuzz_entry.h — what the fuzzers do with one input, as plain functions.
//
// Both builds compile these: the libFuzzer targets (clang, -DGS_FUZZ=ON, tests/fuzz/run_fuzz) call
// them from LLVMFuzzerTestOneInput, and the gcc build's `fuzz.regression.*` tests replay every
// file of tests/fuzz/regressions/ (and the seed corpus) through the same functions. So a crash
// the fuzzer found stays a test in the normal build.
//
// Input convention (FuzzInputToTrace):
//   * An input that starts with the trace magic (\x89GSTRACE) is a trace file, used as it is. Real
//     traces seed this mode; mutations mostly exercise framing, checksums and resynchronisation.
//   * Any other input describes frames whose checksums the fuzzer cannot forge: it is split at
//     kFuzzFrameSeparator; the first segment is merged into a valid TraceHeader, and each further
//     segment is one frame whose first byte says how to frame the rest (bit 0: zlib-compress,
//     bit 1: a TraceEnd rather than a Chunk, bit 2: zstd-compress when bit 0 is clear). Each frame gets correct checksums, so mutations
//     reach the protobuf parsing, the interned tables, the column decoders and the analysis.
//
// Thread safety: the functions share nothing; each call is independent.
#ifndef GPUSTALL_TESTS_FUZZ_FUZZ_ENTRY_H_
#define GPUSTALL_TESTS_FUZZ_FUZZ_ENTRY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gs::fuzz {

inline constexpr std::string_view kFuzzFrameSeparator = "\xA7" "FZ|";

// The trace bytes an input stands for (see above).
std::string FuzzInputToTrace(std::string_view input);

// The inverse for seeding: a trace file's frames as a structured input (header payload, then one
// segment per frame). Returns "" when `trace` has no readable header frame.
std::string TraceToFuzzInput(std::string_view trace);

// Reads every record of the trace the input stands for, resolving every interned id the records
// carry (stacks, frames, functions, threads) as `gsanalyze dump` would. Returns the number of
// records read (for tests); never crashes on any input — that is what is being tested.
uint64_t ReadEveryRecord(std::string_view input);

// The analysis entry point: the input's trace through TraceImporter -> TraceAnalyzer ->
// AnalysisBuilder, rendered as text and as JSON. Returns the total size of the two reports
// (0 when the input is refused as a trace).
size_t AnalyzeAndReport(std::string_view input);

// The PyTorch profiler (Kineto) importer's entry point: the input as a trace's JSON, plain or gzip
// (analyzer/import/kineto/), through TraceImporter -> TraceAnalyzer -> AnalysisBuilder as the one
// pass takes it, rendered as text and as JSON. Returns the total size of the two reports (0 when
// the input is refused). Seeds: corpus/kineto/ (make_kineto_seeds.py).
size_t ImportKinetoAndReport(std::string_view input);

}  // namespace gs::fuzz

#endif  // GPUSTALL_TESTS_FUZZ_FUZZ_ENTRY_H_
