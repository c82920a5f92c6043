// Writes the synthetic traces the browser test loads.
//   gs_html_test_traces large OUT.gstrace [MIN_EVENTS]   the benchmark's gap-dense trace
//   gs_html_test_traces starved OUT.gstrace              the golden test's training loop
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>

#include "analyzer/testing/trace_files.h"

int main(int argc, char** argv) {
  using namespace gs::analyzer::testing;
  if (argc < 3) {
    std::cerr << "usage: gs_html_test_traces large|starved OUT.gstrace [MIN_EVENTS]\n";
    return 2;
  }
  const std::string kind = argv[1], path = argv[2];
  std::string err;
  if (kind == "large") {
    uint64_t events = 0;
    err = WriteLargeTrace(path, argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1'000'000, &events);
    if (err.empty()) std::cout << events << "\n";
  } else if (kind == "starved") {
    err = WriteStarvedTrace(path);
  } else {
    err = "unknown kind " + kind;
  }
  if (!err.empty()) {
    std::cerr << "gs_html_test_traces: " << err << "\n";
    return 1;
  }
  return 0;
}
