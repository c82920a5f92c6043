// intern_tables.h — the interned tables of one trace as a reader has seen them so far.
//
// Strings, API functions, modules, frames, stacks and threads grow across chunks (FORMAT.md,
// "Interning"); TraceReader applies each chunk's definitions before handing out its records, so
// every id a record carries resolves here unless the chunk that defined it was lost (then lookups
// answer "unknown": empty string, nullptr, empty span — never an error).
//
// Memory grows with the number of distinct entries, never with the number of events, and is
// bounded by the bytes of the file whatever ids it contains (sparse ids go to a hash map).
//
// Thread safety: none. The owning TraceReader mutates it in Next(); read it between calls.
// Returned pointers/views stay valid until the next TraceReader::Next() call.
#ifndef GPUSTALL_ANALYZER_READER_INTERN_TABLES_H_
#define GPUSTALL_ANALYZER_READER_INTERN_TABLES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "proto/gstrace.pb.h"

namespace gs::reader {

class InternTables {
 public:
  // "" when unknown (or id 0).
  const std::string& string(uint32_t id) const;
  bool has_string(uint32_t id) const { return strings_.Find(id) != nullptr; }

  // nullptr when unknown.
  const gpustall::trace::ApiFunction* function(uint32_t id) const { return functions_.Find(id); }
  // "" / API_CLASS_OTHER when unknown.
  const std::string& function_name(uint32_t id) const;
  gpustall::trace::ApiClass function_class(uint32_t id) const;

  const gpustall::trace::Module* module(uint32_t id) const { return modules_.Find(id); }
  const gpustall::trace::Frame* frame(uint32_t id) const { return frames_.Find(id); }

  // Frame ids, leaf first; empty when unknown.
  absl::Span<const uint32_t> stack(uint32_t id) const;
  bool stack_truncated(uint32_t id) const;

  // Kernel launch configurations (Chunk.launch_configs); nullptr when unknown.
  const gpustall::trace::LaunchConfig* launch_config(uint32_t id) const { return launch_configs_.Find(id); }

  // nullptr when the trace never named the thread.
  const gpustall::trace::ThreadInfo* thread(uint64_t tid) const;

  // A frame for humans: "function (file:line)", "function", "module.so+0x1a2b", or
  // "<frame #id>" when unknown.
  std::string DescribeFrame(uint32_t id) const;
  // "leaf <- caller <- ... <- root" with at most `max_frames` frames (0: all).
  std::string DescribeStack(uint32_t id, size_t max_frames = 0) const;

  // Moves on whenever a definition is added or replaced (AddFrame's merges included): what was
  // derived from these tables stays what they say while it has not moved.
  uint64_t revision() const { return revision_; }

  size_t num_strings() const { return strings_.size(); }
  size_t num_functions() const { return functions_.size(); }
  size_t num_modules() const { return modules_.size(); }
  size_t num_frames() const { return frames_.size(); }
  size_t num_stacks() const { return stacks_.size(); }
  size_t num_threads() const { return threads_.size(); }

  // --- Used by TraceReader (applying a chunk). Id 0 entries are ignored. ---
  void AddString(uint32_t id, const std::string& value);
  void AddFunction(const gpustall::trace::ApiFunction& function);
  void AddModule(const gpustall::trace::Module& module);
  // Merges into an existing definition: non-zero/non-empty fields replace.
  void AddFrame(const gpustall::trace::Frame& frame);
  void AddStack(const gpustall::trace::Stack& stack);
  void AddThread(const gpustall::trace::ThreadInfo& thread);
  void AddLaunchConfig(const gpustall::trace::LaunchConfig& config);

 private:
  // Id -> value; dense ids (the normal case: 1, 2, 3, ...) in a vector, sparse ones in a map.
  // The vector never grows beyond twice the number of entries, so ids from a damaged or hostile
  // file cannot make it allocate more than the file's own size justifies.
  template <typename T>
  class IdTable {
   public:
    const T* Find(uint32_t id) const {
      if (id < dense_.size()) return present_[id] ? &dense_[id] : nullptr;
      auto it = sparse_.find(id);
      return it == sparse_.end() ? nullptr : &it->second;
    }
    // Returns the slot for `id` (default-constructed if new) and whether it was new.
    T* Slot(uint32_t id, bool* inserted);
    size_t size() const { return size_; }

   private:
    std::vector<T> dense_;
    std::vector<bool> present_;
    absl::flat_hash_map<uint32_t, T> sparse_;
    size_t size_ = 0;
  };

  struct StackRef {
    uint64_t offset = 0;  // into stack_pool_
    uint32_t size = 0;
    bool truncated = false;
  };

  IdTable<std::string> strings_;
  IdTable<gpustall::trace::ApiFunction> functions_;
  IdTable<gpustall::trace::Module> modules_;
  IdTable<gpustall::trace::Frame> frames_;
  IdTable<StackRef> stacks_;
  IdTable<gpustall::trace::LaunchConfig> launch_configs_;
  std::vector<uint32_t> stack_pool_;
  absl::flat_hash_map<uint64_t, gpustall::trace::ThreadInfo> threads_;
  uint64_t revision_ = 0;
};

}  // namespace gs::reader

#endif  // GPUSTALL_ANALYZER_READER_INTERN_TABLES_H_
