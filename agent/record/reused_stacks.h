// reused_stacks.h — the reading side of stack reuse (ring_recorder.h): a record whose stack the
// recorder reused from one of its thread's call-site entries carries no PCs, only the entry's index
// (kRingFlagStackReused, ring.h); the record that unwound and filled the entry carries them
// (kRingFlagStackDefinesReuse). A ring is read in order, so a reused record's PCs are those of its
// entry's last defining record, which this keeps, per ring, for whoever drains it.
//
// Thread safety: one per ring, used by the thread that drains that ring.
#ifndef GPUSTALL_AGENT_RECORD_REUSED_STACKS_H_
#define GPUSTALL_AGENT_RECORD_REUSED_STACKS_H_

#include <cstdint>
#include <vector>

#include "agent/record/ring.h"
#include "agent/record/ring_pool.h"
#include "agent/record/ring_recorder.h"

namespace gs {

class ReusedStacks {
 public:
  // Call for every API call and host wait record of the ring, in ring order: keeps a defining
  // record's PCs, and points a reused record's `pcs` at its entry's. A reused record whose entry
  // was never defined here (a reader that started in the middle of a ring) gets no PCs.
  template <typename Event>
  void Resolve(RingRecordView<Event>* record) {
    std::vector<uint64_t>& entry = pcs_[record->reuse_entry];
    if ((record->flags & kRingFlagStackDefinesReuse) != 0) {
      entry.assign(record->pcs, record->pcs + record->pc_count);
    } else if ((record->flags & kRingFlagStackReused) != 0) {
      if (entry.size() >= static_cast<size_t>(record->pc_count)) {
        record->pcs = entry.data();
      } else {
        record->pcs = nullptr;
        record->pc_count = 0;
      }
    }
  }

  // The ring has a new owner thread, whose recorder entries start empty (RingPool::Claim).
  void Clear() {
    for (std::vector<uint64_t>& entry : pcs_) entry.clear();
  }

 private:
  std::vector<uint64_t> pcs_[StackReuseTable::kEntries];
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_RECORD_REUSED_STACKS_H_
