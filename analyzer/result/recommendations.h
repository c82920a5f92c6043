// recommendations.h — advice backed by numbers from the trace. Each rule needs its evidence to
// reach a threshold (options.recommend_min_share of idle time, or a measured gain); nothing about
// idle time is recommended for a healthy device (steady-state idle below
// options.healthy_idle_share). How full the busy time was (kernel_configs[]: small grids, a thin
// last wave, few blocks an SM) is said whatever the idle time, from recommend_min_share of the
// device's kernel time.
//
// Adding a rule: 1. write a function below in recommendations.cc taking (Analysis, context);
// 2. add it to the table in Recommend(); 3. give it a test in recommendations_test.cc.
#ifndef GPUSTALL_ANALYZER_RESULT_RECOMMENDATIONS_H_
#define GPUSTALL_ANALYZER_RESULT_RECOMMENDATIONS_H_

#include <vector>

#include "analyzer/result/analysis.h"
#include "analyzer/options/options.h"

namespace gs::analyzer {

// Numbers the rules quote that are not in Analysis itself.
struct RecommendationContext {
  uint64_t launch_calls = 0;
  TimeNs launch_call_ns = 0;
  uint64_t allocation_calls = 0;
};

std::vector<Recommendation> Recommend(const Analysis& analysis, const RecommendationContext& ctx,
                                      const AnalysisOptions& options);

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_RESULT_RECOMMENDATIONS_H_
