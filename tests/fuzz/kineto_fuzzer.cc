// libFuzzer target: bytes as a PyTorch profiler trace (JSON or gzip) -> the Kineto importer ->
// TraceAnalyzer -> text and JSON reports (fuzz_entry.h). Errors are fine; crashes, hangs and
// sanitizer reports are not. Seeds: corpus/kineto/.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gs::fuzz::ImportKinetoAndReport(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
