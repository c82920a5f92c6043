// libFuzzer target: bytes -> trace reader -> every record (tests/fuzz/fuzz_entry.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "google/protobuf/stubs/logging.h"
#include "tests/fuzz/fuzz_entry.h"

// protobuf logs every string field with invalid UTF-8 it refuses to parse (a damaged chunk, which
// the reader then reports): thousands of lines a second that slow the fuzzer down. Silence them.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gs::fuzz::ReadEveryRecord(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
