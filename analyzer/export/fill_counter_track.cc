#include "analyzer/export/fill_counter_track.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gs::analyzer {

void FillCounterTrack::Sample(uint32_t device, TimeNs t, double share) {
  w_.Counter(pid_(device), t, kFillCounterName, absl::StrCat("{\"share\":", absl::StrFormat("%.6g", share), "}"));
  ++samples_;
}

void FillCounterTrack::Add(uint32_t device, const FillPiece& piece) {
  auto [it, first] = last_.try_emplace(device);
  Last& last = it->second;
  if (!first && piece.start > last.end) {  // no sized kernel ran in between
    if (last.share != 0) Sample(device, last.end, 0);
    last.share = 0;
  }
  if (first || piece.coverage != last.share) Sample(device, piece.start, piece.coverage);
  last.end = piece.end;
  last.share = piece.coverage;
}

void FillCounterTrack::Finish() {
  for (auto& [device, last] : last_) {
    if (last.share != 0) Sample(device, last.end, 0);
    last.share = 0;
  }
}

}  // namespace gs::analyzer
