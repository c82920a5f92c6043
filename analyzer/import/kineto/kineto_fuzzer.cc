// libFuzzer target (-DGS_FUZZ=ON, tests/fuzz/run_fuzz): bytes as a PyTorch profiler trace (JSON or
// gzip) through the importer and the analysis. Errors are fine; crashes, hangs and sanitizer
// reports are not.
#include <cstddef>
#include <cstdint>
#include <string>

#include "analyzer/analysis/trace_analyzer.h"
#include "analyzer/import/kineto/kineto_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gs::analyzer;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  auto t = kineto::KinetoTrace::FromBuffer(bytes, "<fuzz>");
  if (!t.ok()) return 0;
  static const AnalysisOptions options;
  TraceAnalyzer analyzer(options, (*t)->tables());
  (void)(*t)->ReadAll(&analyzer);
  analyzer.Finish((*t)->info());
  return 0;
}
