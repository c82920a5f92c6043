#include "agent/record/activity_buffer.h"

#include <cstring>

namespace gs {

void ActivityBuffer::Init(size_t capacity) {
  std::lock_guard<std::mutex> lock(mu_);
  capacity_ = capacity;
  waiting_.reserve(capacity);
}

void ActivityBuffer::Add(const GpuActivityEvent& activity) {
  std::lock_guard<std::mutex> lock(mu_);
  if (waiting_.size() >= capacity_) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  uint32_t name_index = 0;
  if (activity.name != nullptr && activity.name[0] != '\0') {
    // Kernel names repeat: after the first sighting this allocates nothing (short names fit the
    // string's inline buffer; longer ones allocate here, on CUPTI's thread, never the app's).
    scratch_.assign(activity.name, strnlen(activity.name, 4096));
    auto it = name_index_.find(scratch_);
    if (it == name_index_.end()) {
      names_.push_back(scratch_);
      it = name_index_.emplace(scratch_, static_cast<uint32_t>(names_.size())).first;
    }
    name_index = it->second;
  }
  PendingActivity pending{activity, name_index};
  pending.activity.name = nullptr;
  waiting_.push_back(pending);
  added_.fetch_add(1, std::memory_order_relaxed);
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
