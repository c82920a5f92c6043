// record_pass.h — the html tests' version of `gsanalyze html`'s pass over a synthetic trace: its
// records through the timeline's recorder into the analysis (with the device limits the fill needs
// and the interval and fill observers the recorder draws from), the analysis built.
#ifndef GPUSTALL_ANALYZER_REPORT_HTML_TEST_RECORD_PASS_H_
#define GPUSTALL_ANALYZER_REPORT_HTML_TEST_RECORD_PASS_H_

#include <vector>

#include "analyzer/analysis/trace_analyzer.h"
#include "analyzer/report/html/timeline.h"
#include "analyzer/result/analysis_builder.h"
#include "analyzer/testing/synthetic_trace.h"

namespace gs::analyzer::html {

// `finish_devices`: what the recorder's Finish is told of the devices (their lane labels).
inline Analysis RecordPass(testing::SyntheticTrace& t, Timeline* timeline,
                           const std::vector<DeviceDescription>& finish_devices) {
  AnalysisOptions options;
  TraceAnalyzer analyzer(options, t.tables());
  TimelineRecorder recorder(timeline, 0, t.tables(), &analyzer);
  analyzer.SetDevices(t.info().devices);
  analyzer.set_interval_observer([&](uint32_t d, const IntervalVerdict& v) { recorder.OnInterval(d, v); });
  analyzer.set_fill_observer([&](uint32_t d, const FillPiece& p) { recorder.OnFill(d, p); });
  for (const ApiCall& c : t.calls()) recorder.OnApiCall(c);
  for (const GpuActivity& a : t.activities()) recorder.OnActivity(a);
  AnalysisBuilder builder(options);
  builder.AddTrace(analyzer.Finish(t.info()));
  recorder.Finish("", finish_devices);
  return builder.Build();
}

}  // namespace gs::analyzer::html

#endif  // GPUSTALL_ANALYZER_REPORT_HTML_TEST_RECORD_PASS_H_
