#include "analyzer/reader/intern_tables.h"

#include "absl/strings/str_cat.h"

namespace gs::reader {

namespace pb = gpustall::trace;

template <typename T>
T* InternTables::IdTable<T>::Slot(uint32_t id, bool* inserted) {
  if (id >= dense_.size() && id < 2 * (size_ + 16)) {
    dense_.resize(static_cast<size_t>(id) + 1 + id / 2);
    present_.resize(dense_.size(), false);
    // Entries that were sparse until now move into the grown vector (Find looks there first).
    for (auto it = sparse_.begin(); it != sparse_.end();) {
      if (it->first < dense_.size()) {
        dense_[it->first] = std::move(it->second);
        present_[it->first] = true;
        sparse_.erase(it++);
      } else {
        ++it;
      }
    }
  }
  if (id < dense_.size()) {
    *inserted = !present_[id];
    if (*inserted) {
      present_[id] = true;
      ++size_;
    }
    return &dense_[id];
  }
  auto [it, is_new] = sparse_.try_emplace(id);
  *inserted = is_new;
  if (is_new) ++size_;
  return &it->second;
}

namespace {
const std::string& Empty() {
  static const std::string* const empty = new std::string();
  return *empty;
}
}  // namespace

const std::string& InternTables::string(uint32_t id) const {
  const std::string* s = strings_.Find(id);
  return s == nullptr ? Empty() : *s;
}

const std::string& InternTables::function_name(uint32_t id) const {
  const pb::ApiFunction* f = functions_.Find(id);
  return f == nullptr ? Empty() : f->name();
}

pb::ApiClass InternTables::function_class(uint32_t id) const {
  const pb::ApiFunction* f = functions_.Find(id);
  return f == nullptr ? pb::API_CLASS_OTHER : f->api_class();
}

absl::Span<const uint32_t> InternTables::stack(uint32_t id) const {
  const StackRef* s = stacks_.Find(id);
  if (s == nullptr) return {};
  return absl::Span<const uint32_t>(stack_pool_.data() + s->offset, s->size);
}

bool InternTables::stack_truncated(uint32_t id) const {
  const StackRef* s = stacks_.Find(id);
  return s != nullptr && s->truncated;
}

const pb::ThreadInfo* InternTables::thread(uint64_t tid) const {
  auto it = threads_.find(tid);
  return it == threads_.end() ? nullptr : &it->second;
}

void InternTables::AddString(uint32_t id, const std::string& value) {
  ++revision_;
  if (id == 0) return;
  bool inserted;
  *strings_.Slot(id, &inserted) = value;
}

void InternTables::AddFunction(const pb::ApiFunction& function) {
  ++revision_;
  if (function.id() == 0) return;
  bool inserted;
  *functions_.Slot(function.id(), &inserted) = function;
}

void InternTables::AddModule(const pb::Module& module) {
  ++revision_;
  if (module.id() == 0) return;
  bool inserted;
  *modules_.Slot(module.id(), &inserted) = module;
}

void InternTables::AddLaunchConfig(const pb::LaunchConfig& config) {
  ++revision_;
  if (config.id() == 0) return;
  bool inserted;
  *launch_configs_.Slot(config.id(), &inserted) = config;
}

void InternTables::AddFrame(const pb::Frame& frame) {
  ++revision_;
  if (frame.id() == 0) return;
  bool inserted;
  pb::Frame* slot = frames_.Slot(frame.id(), &inserted);
  if (inserted) {
    *slot = frame;
    return;
  }
  // A later definition (symbolisation): non-zero fields replace. MergeFrom has exactly these
  // semantics for proto3 scalars.
  slot->MergeFrom(frame);
}

void InternTables::AddStack(const pb::Stack& stack) {
  ++revision_;
  if (stack.id() == 0) return;
  bool inserted;
  StackRef* slot = stacks_.Slot(stack.id(), &inserted);
  slot->offset = stack_pool_.size();
  slot->size = static_cast<uint32_t>(stack.frame_ids_size());
  slot->truncated = stack.truncated();
  stack_pool_.insert(stack_pool_.end(), stack.frame_ids().begin(), stack.frame_ids().end());
}

void InternTables::AddThread(const pb::ThreadInfo& thread) {
  ++revision_;
  pb::ThreadInfo& slot = threads_[thread.tid()];
  slot.MergeFrom(thread);  // a rename replaces the name; is_main, once set, stays
}

std::string InternTables::DescribeFrame(uint32_t id) const {
  const pb::Frame* f = frames_.Find(id);
  if (f == nullptr) return absl::StrCat("<frame #", id, ">");
  const std::string& function = string(f->function_id());
  const std::string& file = string(f->file_id());
  if (!function.empty()) {
    if (file.empty()) return std::string(function);
    if (f->line() == 0) return absl::StrCat(function, " (", file, ")");
    return absl::StrCat(function, " (", file, ":", f->line(), ")");
  }
  if (!file.empty()) return absl::StrCat(file, ":", f->line());
  const pb::Module* m = modules_.Find(f->module_id());
  if (m == nullptr) return absl::StrCat("0x", absl::Hex(f->rel_pc()));
  const size_t slash = m->path().rfind('/');
  const std::string base = slash == std::string::npos ? m->path() : m->path().substr(slash + 1);
  return absl::StrCat(base, "+0x", absl::Hex(f->rel_pc()));
}

std::string InternTables::DescribeStack(uint32_t id, size_t max_frames) const {
  if (id == 0) return "-";
  const StackRef* s = stacks_.Find(id);
  if (s == nullptr) return absl::StrCat("<stack #", id, ">");
  std::string out;
  const absl::Span<const uint32_t> frames = stack(id);
  const size_t n = max_frames == 0 || max_frames > frames.size() ? frames.size() : max_frames;
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) out += " <- ";
    out += DescribeFrame(frames[i]);
  }
  if (n < frames.size() || s->truncated) out += " <- ...";
  return out;
}

}  // namespace gs::reader
