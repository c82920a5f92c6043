#include "analyzer/model/trace_tables.h"

#include "absl/strings/str_cat.h"

namespace gs::analyzer {

void LossCounters::Add(const LossCounters& o) {
  ring_dropped += o.ring_dropped;
  cupti_dropped += o.cupti_dropped;
  other_dropped += o.other_dropped;
  samples_dropped += o.samples_dropped;
  stacks_truncated += o.stacks_truncated;
  activities_without_time += o.activities_without_time;
  corrupt_frames += o.corrupt_frames;
  missing_chunks += o.missing_chunks;
  truncated_bytes += o.truncated_bytes;
  late_activities += o.late_activities;
  unmatched_activities += o.unmatched_activities;
  folded_host_calls += o.folded_host_calls;
}

bool LossCounters::Any() const {
  return ring_dropped || cupti_dropped || other_dropped || samples_dropped ||
         activities_without_time || corrupt_frames || missing_chunks || truncated_bytes ||
         late_activities || unmatched_activities || folded_host_calls;
}

std::string TraceInfo::Label() const {
  std::string where = absl::StrCat("pid ", pid, host.empty() ? "" : " on ", host);
  if (rank) return absl::StrCat("rank ", *rank, " (", where, ")");
  return where;
}

void InMemoryTables::SetFrame(uint32_t id, uint32_t function_string, uint32_t file_string,
                           uint32_t line, uint32_t module_id) {
  RawFrame& f = frames_[id];
  if (function_string) f.function = function_string;
  if (file_string) f.file = file_string;
  if (line) f.line = line;
  if (module_id) f.module = module_id;
}

const std::string& InMemoryTables::String(uint32_t id) const {
  static const std::string* const kEmpty = new std::string();
  auto it = strings_.find(id);
  return it == strings_.end() ? *kEmpty : it->second;
}

std::string InMemoryTables::FunctionName(uint32_t function_id) const {
  auto it = functions_.find(function_id);
  if (it != functions_.end() && !it->second.empty()) return it->second;
  return function_id ? absl::StrCat("api#", function_id) : std::string("(unknown call)");
}

std::string InMemoryTables::ThreadName(uint64_t tid) const {
  auto it = threads_.find(tid);
  return it == threads_.end() ? std::string() : it->second;
}

FrameInfo InMemoryTables::ResolveFrame(uint32_t frame_id) const {
  FrameInfo info;
  auto it = frames_.find(frame_id);
  if (it == frames_.end()) {
    info.function = absl::StrCat("frame#", frame_id);
    return info;
  }
  info.function = String(it->second.function);
  info.file = String(it->second.file);
  info.line = it->second.line;
  auto m = modules_.find(it->second.module);
  if (m != modules_.end()) info.module = m->second;
  if (info.function.empty()) info.function = "??";
  return info;
}

std::vector<FrameInfo> InMemoryTables::ResolveStack(uint32_t stack_id) const {
  std::vector<FrameInfo> out;
  auto it = stacks_.find(stack_id);
  if (it == stacks_.end()) return out;
  out.reserve(it->second.size());
  for (uint32_t f : it->second) out.push_back(ResolveFrame(f));
  return out;
}

}  // namespace gs::analyzer
