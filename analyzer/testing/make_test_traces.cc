// Writes the traces the CLI exit-code table (cli/exit_codes.cmake) runs gsanalyze on.
//   gs_analyzer_make_test_traces DIR
#include <iostream>
#include <string>

#include "analyzer/testing/trace_files.h"

int main(int argc, char** argv) {
  using namespace gs::analyzer::testing;
  if (argc != 2) {
    std::cerr << "usage: gs_analyzer_make_test_traces DIR\n";
    return 2;
  }
  std::string dir = argv[1];
  struct {
    const char* name;
    std::string (*write)(const std::string&);
  } files[] = {
      {"starved.gstrace", [](const std::string& p) { return WriteStarvedTrace(p); }},
      {"healthy.gstrace", [](const std::string& p) { return WriteHealthyTrace(p); }},
      {"truncated.gstrace", WriteTruncatedTrace},
      {"newer.gstrace", WriteNewerSchemaTrace},
      {"not_a_trace.txt", WriteNotATrace},
      {"sized.gstrace", [](const std::string& p) { return WriteSizedTrace(p); }},
      {"sized_r0.gstrace", [](const std::string& p) { return WriteSizedTrace(p, 10, 0); }},
      {"sized_r1.gstrace", [](const std::string& p) { return WriteSizedTrace(p, 10, 1); }},
  };
  for (const auto& f : files) {
    std::string err = f.write(dir + "/" + f.name);
    if (!err.empty()) {
      std::cerr << f.name << ": " << err << "\n";
      return 1;
    }
  }
  return 0;
}
