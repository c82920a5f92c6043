// Writes the traces tty_test.py runs gsanalyze on under a pseudo-terminal:
//   gs_analyzer_tty_test_traces DIR EVENTS  ->  DIR/small.gstrace, DIR/large.gstrace (>= EVENTS records)
#include <cstdlib>
#include <iostream>
#include <string>

#include "analyzer/testing/trace_files.h"

int main(int argc, char** argv) {
  using namespace gs::analyzer::testing;
  if (argc != 3) {
    std::cerr << "usage: gs_analyzer_tty_test_traces DIR EVENTS\n";
    return 2;
  }
  const std::string dir = argv[1];
  uint64_t events = 0;
  std::string error = WriteStarvedTrace(dir + "/small.gstrace");
  if (error.empty()) error = WriteLargeTrace(dir + "/large.gstrace", std::strtoull(argv[2], nullptr, 10), &events);
  if (!error.empty()) {
    std::cerr << error << "\n";
    return 1;
  }
  std::cout << "large.gstrace: " << events << " records\n";
  return 0;
}
