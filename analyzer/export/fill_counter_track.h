// fill_counter_track.h — the Chrome export's "SM coverage" counter track: per device, how full its
// kernels kept it over time, one ph "C" event (name "SM coverage", args {"share": x}) on the
// device's process wherever the value changes.
//
// The values are the analysis's own (TraceObserver::OnFillPiece, timeline/fill_timeline.h): x is
// min(1, Σ wave-aware SM coverage of the kernels running) from a piece's start, and 0 from the end
// of the last piece before a stretch without sized kernels. So the track's integral over the
// trace is the report's devices[].sm_coverage_busy_ns, and it steps at kernel boundaries.
// Memory: one value per device. Thread safety: none.
#ifndef GPUSTALL_ANALYZER_EXPORT_FILL_COUNTER_TRACK_H_
#define GPUSTALL_ANALYZER_EXPORT_FILL_COUNTER_TRACK_H_

#include <cstdint>
#include <functional>
#include <map>

#include "analyzer/export/chrome_trace_writer.h"
#include "analyzer/timeline/fill_timeline.h"

namespace gs::analyzer {

inline constexpr char kFillCounterName[] = "SM coverage";

class FillCounterTrack {
 public:
  // `pid`: the device's process in the export's layout. `writer` outlives the track.
  FillCounterTrack(ChromeTraceWriter* writer, std::function<int64_t(uint32_t device)> pid)
      : w_(*writer), pid_(std::move(pid)) {}

  // The device's pieces in time order (as the analysis hands them over).
  void Add(uint32_t device, const FillPiece& piece);
  // The closing 0 of every device that had a piece; call before the writer closes.
  void Finish();
  uint64_t samples() const { return samples_; }

 private:
  struct Last {
    TimeNs end = 0;
    double share = 0;
  };
  void Sample(uint32_t device, TimeNs t, double share);
  ChromeTraceWriter& w_;
  std::function<int64_t(uint32_t)> pid_;
  std::map<uint32_t, Last> last_;
  uint64_t samples_ = 0;
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_EXPORT_FILL_COUNTER_TRACK_H_
