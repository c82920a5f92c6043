// report.h — the one small interface every output format implements, and the registry of them.
//
// A format renders a finished Analysis to text; it computes nothing (all numbers come from the
// analysis, so text and JSON never disagree).
#ifndef GPUSTALL_ANALYZER_REPORT_REPORT_H_
#define GPUSTALL_ANALYZER_REPORT_REPORT_H_

#include <string>
#include <string_view>
#include <vector>

#include "analyzer/result/analysis.h"

namespace gs::analyzer {

struct ReportOptions {
  int width = 100;          // terminal columns (text); lines are wrapped or cut to fit
  size_t tree_depth = 8;    // caller->callee tree levels shown
  double tree_min_share = 0.02;  // tree nodes below this share of idle time are folded
  size_t longest_intervals = 5;  // examples shown in the text report (JSON has all kept)
  bool color = false;       // text: ANSI colours (the CLI sets it on a terminal without NO_COLOR)
};

class ReportFormat {
 public:
  virtual ~ReportFormat() = default;
  virtual std::string_view name() const = 0;   // "text", "json"
  virtual std::string Render(const Analysis& analysis, const ReportOptions& options) const = 0;
};

// nullptr for an unknown name.
const ReportFormat* FindReportFormat(std::string_view name);
std::vector<std::string> ReportFormatNames();

// The formats (each in its own file).
const ReportFormat& TextReportFormat();
const ReportFormat& JsonReportFormat();

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_REPORT_REPORT_H_
