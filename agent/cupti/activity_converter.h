// activity_converter.h — CUPTI activity records (CUDA 12.0 to 13.x layouts) → GpuActivityEvent.
//
// Pure functions over in-memory records, so tests feed it real CUpti_Activity* structs built by
// hand (no CUPTI needed). The timestamps are taken as they are: the CUPTI session registers a
// CLOCK_MONOTONIC timestamp callback before enabling any kind, so records are already on the
// agent's clock.
//
// Thread safety: ActivityConverter holds a small context→device table filled as records arrive;
// one converter is used by one thread at a time (CUPTI's buffer-completed callback).
#ifndef GPUSTALL_AGENT_CUPTI_ACTIVITY_CONVERTER_H_
#define GPUSTALL_AGENT_CUPTI_ACTIVITY_CONVERTER_H_

#include <cupti_activity.h>

#include <cstdint>

#include "agent/record/events.h"

namespace gs {

class ActivityConverter {
 public:
  // Converts one record. Returns false for kinds the trace does not carry (OVERHEAD, ...), and
  // counts records without timestamps (start == end == 0, a sign of a full device buffer).
  bool Convert(const CUpti_Activity* record, GpuActivityEvent* out);

  uint64_t records_without_timestamps() const { return records_without_timestamps_; }
  uint64_t overhead_records() const { return overhead_records_; }

 private:
  // Synchronization records carry a context but no device: learn context → device from the
  // kernel/memcpy/memset/memory records of the same context.
  void LearnContext(uint32_t context_id, uint32_t device_id);
  uint32_t DeviceOfContext(uint32_t context_id) const;

  static constexpr int kMaxContexts = 64;
  uint32_t context_ids_[kMaxContexts] = {};
  uint32_t context_devices_[kMaxContexts] = {};
  int contexts_ = 0;
  uint64_t records_without_timestamps_ = 0;
  uint64_t overhead_records_ = 0;
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_CUPTI_ACTIVITY_CONVERTER_H_
