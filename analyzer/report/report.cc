#include "analyzer/report/report.h"

namespace gs::analyzer {

namespace {
// The registry. Adding a format:
//   1. write report/<name>_report.cc implementing ReportFormat, with a `const ReportFormat&
//      <Name>ReportFormat()` accessor declared in report.h;
//   2. add the accessor to this list;
//   3. add the file to gs_analyzer_report in analyzer/CMakeLists.txt and a test beside it;
//   4. give `gsanalyze report` a flag for it in cli/args.cc if it needs one.
const ReportFormat* const* Formats(size_t* n) {
  static const ReportFormat* const kFormats[] = {&TextReportFormat(), &JsonReportFormat()};
  *n = sizeof(kFormats) / sizeof(kFormats[0]);
  return kFormats;
}
}  // namespace

const ReportFormat* FindReportFormat(std::string_view name) {
  size_t n;
  const ReportFormat* const* f = Formats(&n);
  for (size_t i = 0; i < n; ++i)
    if (f[i]->name() == name) return f[i];
  return nullptr;
}

std::vector<std::string> ReportFormatNames() {
  size_t n;
  const ReportFormat* const* f = Formats(&n);
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.emplace_back(f[i]->name());
  return out;
}

}  // namespace gs::analyzer
