#include "agent/record/activity_buffer.h"

#include <cstring>

namespace gs {

void ActivityBuffer::Init(size_t capacity) {
  std::lock_guard<std::mutex> lock(mu_);
  capacity_ = capacity;
  waiting_.reserve(capacity);
}

void ActivityBuffer::Add(const GpuActivityEvent* activities, size_t count) {
  std::lock_guard<std::mutex> lock(mu_);
  size_t added = 0;
  for (size_t i = 0; i < count; ++i) {
    const GpuActivityEvent& activity = activities[i];
    if (waiting_.size() >= capacity_) {
      dropped_.fetch_add(count - i, std::memory_order_relaxed);
      break;
    }
    uint32_t name_index = 0;
    if (activity.name != nullptr && activity.name[0] != '\0') name_index = NameIndex(activity.name);
    PendingActivity pending{activity, name_index};
    pending.activity.name = nullptr;
    waiting_.push_back(pending);
    ++added;
  }
  added_.fetch_add(added, std::memory_order_relaxed);
}

uint32_t ActivityBuffer::NameIndex(const char* name) {
  // CUPTI hands every record of one kernel the same name pointer (cupti_activity.h: "This name
  // is shared across all activity records representing the same kernel"), so a loop of a few
  // kernels finds its name here by pointer. The text is compared too: a pointer freed with its
  // module and reused for another name must not take the old one's index.
  for (const RecentName& r : recent_names_) {
    if (r.name == name && std::strncmp(name, names_[r.index - 1].c_str(), names_[r.index - 1].size() + 1) == 0)
      return r.index;
  }
  // Kernel names repeat: after the first sighting this allocates nothing (short names fit the
  // string's inline buffer; longer ones allocate here, on CUPTI's thread, never the app's).
  scratch_.assign(name, strnlen(name, kMaxNameBytes));
  auto it = name_index_.find(scratch_);
  if (it == name_index_.end()) {
    names_.push_back(scratch_);
    it = name_index_.emplace(scratch_, static_cast<uint32_t>(names_.size())).first;
  }
  recent_names_[next_recent_name_] = RecentName{name, it->second};
  next_recent_name_ = (next_recent_name_ + 1) % kRecentNames;
  return it->second;
}

void ActivityBuffer::TakeAll(std::vector<PendingActivity>* out) {
  out->clear();
  if (out->capacity() < capacity_) out->reserve(capacity_);
  std::lock_guard<std::mutex> lock(mu_);
  waiting_.swap(*out);
}

void ActivityBuffer::AddGraphNode(const GraphNodeEvent& node) {
  std::lock_guard<std::mutex> lock(mu_);
  if (graph_nodes_.size() >= capacity_) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  graph_nodes_.push_back(node);
}

void ActivityBuffer::TakeGraphNodes(std::vector<GraphNodeEvent>* out) {
  out->clear();
  std::lock_guard<std::mutex> lock(mu_);
  graph_nodes_.swap(*out);
}

std::string ActivityBuffer::NameAt(uint32_t name_index) {
  std::lock_guard<std::mutex> lock(mu_);
  return name_index >= 1 && name_index <= names_.size() ? names_[name_index - 1] : std::string();
}

}  // namespace gs
