// stack_table.h — interning of native frames and stacks, on the writer thread.
//
// The hot path stores raw PCs; the writer turns each distinct PC into a frame id and each
// distinct (PC sequence, truncated) into a stack id, so a stack that repeats a million times
// costs its id in the trace, and its frames and symbols are written once.
//
// Thread safety: none; owned and used by the writer thread only. Memory grows with the number of
// DISTINCT stacks and PCs, never with the number of calls.
//
// Why std::unordered_map and not absl::flat_hash_map: Debian's libabsl_raw_hash_set.a uses
// local-exec TLS (R_X86_64_TPOFF32, RandomSeed's counter), so it cannot be linked into
// libgsagent.so, and its shared library would be one more NEEDED entry (and version clash) in
// every injected process. This is the writer thread; the difference does not matter here.
#ifndef GPUSTALL_AGENT_STACKS_STACK_TABLE_H_
#define GPUSTALL_AGENT_STACKS_STACK_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gs {

// A stack is a sequence of 64-bit frame keys. A native frame's key is its return address; a
// Python frame's key (a frame of the merged native+Python stack, agent/python/stack_merge.h) is
// kPythonFrameKeyBit | code id << 32 | instruction offset: user-space addresses never have bit
// 63 set, so the two kinds cannot collide. One (code, offset) pair is one Python frame.
constexpr uint64_t kPythonFrameKeyBit = uint64_t{1} << 63;
inline uint64_t PythonFrameKey(uint32_t code_id, int32_t addrq) {
  return kPythonFrameKeyBit | static_cast<uint64_t>(code_id & 0x7fffffffu) << 32 | static_cast<uint32_t>(addrq);
}
inline bool IsPythonFrameKey(uint64_t key) { return (key & kPythonFrameKeyBit) != 0; }
inline uint32_t PythonFrameKeyCodeId(uint64_t key) { return static_cast<uint32_t>(key >> 32) & 0x7fffffffu; }
inline int32_t PythonFrameKeyAddrq(uint64_t key) { return static_cast<int32_t>(static_cast<uint32_t>(key)); }

class StackTable {
 public:
  // Id (> 0) of the frame for frame key `pc` (a return address or a PythonFrameKey); *is_new
  // when first seen.
  uint32_t InternFrame(uint64_t pc, bool* is_new);

  // Id (> 0) of the stack `pcs` (frame keys, innermost first) with its truncation flag. When
  // new, *is_new is set and `frame_ids` receives the frame ids (new frames are appended to
  // `new_frames` as (frame id, key) pairs so the caller can describe and symbolise them).
  uint32_t InternStack(const uint64_t* pcs, size_t count, bool truncated, bool* is_new,
                       std::vector<uint32_t>* frame_ids,
                       std::vector<std::pair<uint32_t, uint64_t>>* new_frames);

  size_t stack_count() const { return stacks_.size(); }
  size_t frame_count() const { return frames_.size(); }

 private:
  // The key is the PCs followed by one word for the truncation flag.
  struct KeyHash {
    size_t operator()(const std::vector<uint64_t>& key) const {
      uint64_t h = 0x9E3779B97F4A7C15ull ^ key.size();
      for (uint64_t pc : key) {
        h ^= pc + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
        h *= 0xff51afd7ed558ccdull;
      }
      return static_cast<size_t>(h ^ (h >> 33));
    }
  };

  std::unordered_map<uint64_t, uint32_t> frames_;
  std::unordered_map<std::vector<uint64_t>, uint32_t, KeyHash> stacks_;
  std::vector<uint64_t> scratch_key_;  // reused: a lookup of a known stack does not allocate
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_STACKS_STACK_TABLE_H_
