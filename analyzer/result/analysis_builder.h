// analysis_builder.h — merges the results of one or more traces into an Analysis: device
// summaries, cause shares, stacks merged by their frames (so ranks running the same code add up),
// the caller->callee tree, sites, copies, memory, notes and recommendations.
//
// Thread safety: none.
#ifndef GPUSTALL_ANALYZER_RESULT_ANALYSIS_BUILDER_H_
#define GPUSTALL_ANALYZER_RESULT_ANALYSIS_BUILDER_H_

#include <string>
#include <vector>

#include "analyzer/options/options.h"
#include "analyzer/result/analysis.h"
#include "analyzer/result/trace_result.h"

namespace gs::analyzer {

class AnalysisBuilder {
 public:
  explicit AnalysisBuilder(const AnalysisOptions& options) : options_(options) {}
  void AddTrace(TraceResult result) { results_.push_back(std::move(result)); }
  void AddWarning(std::string warning) { warnings_.push_back(std::move(warning)); }
  Analysis Build();

 private:
  const AnalysisOptions& options_;
  std::vector<TraceResult> results_;
  std::vector<std::string> warnings_;
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_RESULT_ANALYSIS_BUILDER_H_
