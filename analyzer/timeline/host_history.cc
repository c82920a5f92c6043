#include "analyzer/timeline/host_history.h"

#include <algorithm>
#include <type_traits>

namespace gs::analyzer {

namespace {
constexpr uint32_t kPrefetchAhead = 16;
}  // namespace

HostHistory::HostHistory(uint32_t correlation_slots_log2, size_t max_calls_per_thread)
    : ring_(static_cast<ApiCall*>(std::calloc(size_t{1} << correlation_slots_log2, sizeof(ApiCall)))),
      mask_((1u << correlation_slots_log2) - 1),
      max_calls_(max_calls_per_thread) {
  // All-zero bytes are a valid ApiCall (an aggregate of integers and enums) with correlation 0.
  static_assert(std::is_trivially_copyable_v<ApiCall> && std::is_trivially_destructible_v<ApiCall>);
  static_assert(sizeof(ApiCall) == 80, "the ring's slot size (host_history.h): a field more costs every call a store");
  if (ring_ == nullptr) throw std::bad_alloc();
}

void HostHistory::AddCall(const ApiCall& call) {
  if (call.correlation != 0 && IsEnqueue(call.api_class)) {
    ring_[call.correlation & mask_] = call;
    // Correlation ids mostly rise by one per call: ask for a slot a few calls ahead now, so that
    // its store does not wait for the line to come from memory.
    __builtin_prefetch(&ring_[(call.correlation + kPrefetchAhead) & mask_], 1);
  }
  if (call.api_class == ApiClass::kStreamWaitEvent) {
    auto [it, inserted] = last_wait_.try_emplace(call.stream, call.enter_ns);
    if (!inserted && call.enter_ns >= it->second) {
      prev_wait_[call.stream] = it->second;
      it->second = call.enter_ns;
    }
  }
  RingDeque<ApiCall>& calls = MutableThread(call.thread).calls;
  if (calls.empty() || calls.back().enter_ns <= call.enter_ns) {
    calls.push_back(call);
  } else {  // rare: a record out of order; insert in place
    calls.insert_sorted(call, [](const ApiCall& a, const ApiCall& b) { return a.enter_ns < b.enter_ns; });
  }
  if (calls.size() > max_calls_) {
    calls.pop_front();
    ++folded_;
  }
}

void HostHistory::AddSample(const Sample& sample) {
  RingDeque<Sample>& samples = MutableThread(sample.thread).samples;
  if (samples.empty() || samples.back().time_ns <= sample.time_ns) {
    samples.push_back(sample);
  } else {
    samples.insert_sorted(sample, [](const Sample& a, const Sample& b) { return a.time_ns < b.time_ns; });
  }
  if (samples.size() > max_calls_) samples.pop_front();
}

void HostHistory::AddWait(const HostWait& wait) {
  RingDeque<HostWait>& waits = MutableThread(wait.thread).waits;
  if (waits.empty() || waits.back().start_ns <= wait.start_ns) {
    waits.push_back(wait);
  } else {
    waits.insert_sorted(wait, [](const HostWait& a, const HostWait& b) { return a.start_ns < b.start_ns; });
  }
  if (waits.size() > max_calls_) waits.pop_front();
}

const ApiCall* HostHistory::FindCorrelated(uint32_t correlation) const {
  if (correlation == 0) return nullptr;
  const ApiCall& slot = ring_[correlation & mask_];
  if (slot.correlation != correlation) return nullptr;
  return &slot;
}

ThreadHistory& HostHistory::MutableThread(uint64_t tid) {
  if (cached_ != nullptr && cached_tid_ == tid) return *cached_;
  auto [it, inserted] = threads_.try_emplace(tid);
  cached_tid_ = tid;
  cached_ = &it->second;  // an insertion may have moved the others: the cache holds only this one
  return *cached_;
}

const ThreadHistory* HostHistory::Thread(uint64_t tid) const {
  if (cached_ != nullptr && cached_tid_ == tid) return cached_;
  auto it = threads_.find(tid);
  return it == threads_.end() ? nullptr : &it->second;
}

TimeNs HostHistory::LastStreamWaitBefore(uint64_t stream, TimeNs t) const {
  if (last_wait_.empty()) return -1;
  auto it = last_wait_.find(stream);
  if (it == last_wait_.end()) return -1;
  if (it->second <= t) return it->second;
  auto prev = prev_wait_.find(stream);
  return prev != prev_wait_.end() && prev->second <= t ? prev->second : -1;
}

namespace {
void Prune(ThreadHistory& h, TimeNs t) {
  auto& calls = h.calls;
  // Keep the last call that exited before t: it may be the preceding call of the next gap.
  while (calls.size() >= 2 && calls[1].exit_ns < t) calls.pop_front();
  // Keep the last sample before t too: it stands for time up to the midpoint with the next one.
  while (h.samples.size() >= 2 && h.samples[1].time_ns < t) h.samples.pop_front();
  // A wait is needed while a gap may overlap it, and while a kept sample may lie inside it (a
  // sample taken in a wait never stands for time outside it): the front goes once it ended by
  // then. (By start order, a long wait at the front holds later ones until it ends.)
  TimeNs floor = t;
  if (!h.samples.empty()) floor = std::min(floor, h.samples.front().time_ns);
  while (!h.waits.empty() && h.waits.front().end_ns <= floor) h.waits.pop_front();
}
}  // namespace

size_t HostHistory::retained() const {
  size_t n = 0;
  for (const auto& [tid, h] : threads_) n += h.calls.size() + h.samples.size() + h.waits.size();
  return n;
}

void HostHistory::PruneBefore(TimeNs t) {
  for (auto& [tid, h] : threads_) Prune(h, t);
}

void HostHistory::PruneThreadBefore(uint64_t tid, TimeNs t) {
  if (cached_ != nullptr && cached_tid_ == tid) return Prune(*cached_, t);
  auto it = threads_.find(tid);
  if (it != threads_.end()) Prune(it->second, t);
}

}  // namespace gs::analyzer
