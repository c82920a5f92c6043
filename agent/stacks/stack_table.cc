#include "agent/stacks/stack_table.h"

namespace gs {

uint32_t StackTable::InternFrame(uint64_t pc, bool* is_new) {
  auto [it, inserted] = frames_.try_emplace(pc, static_cast<uint32_t>(frames_.size() + 1));
  *is_new = inserted;
  return it->second;
}

uint32_t StackTable::InternStack(const uint64_t* pcs, size_t count, bool truncated, bool* is_new,
                                 std::vector<uint32_t>* frame_ids,
                                 std::vector<std::pair<uint32_t, uint64_t>>* new_frames) {
  scratch_key_.assign(pcs, pcs + count);
  scratch_key_.push_back(truncated ? 1 : 0);
  auto found = stacks_.find(scratch_key_);
  if (found != stacks_.end()) {
    *is_new = false;
    return found->second;
  }
  frame_ids->clear();
  for (size_t i = 0; i < count; ++i) {
    const uint64_t pc = pcs[i];
    bool frame_is_new = false;
    const uint32_t id = InternFrame(pc, &frame_is_new);
    if (frame_is_new) new_frames->emplace_back(id, pc);
    frame_ids->push_back(id);
  }
  const uint32_t id = static_cast<uint32_t>(stacks_.size() + 1);
  stacks_.emplace(scratch_key_, id);
  *is_new = true;
  return id;
}

}  // namespace gs
