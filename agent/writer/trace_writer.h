// trace_writer.h — turns what the recorder buffered into .gstrace frames (writer thread).
//
// Drain() empties every thread's ring and the GPU activity buffer into the pending Chunk:
// API calls and host waits become per-thread columnar batches, PCs become interned frames and stacks (new frames
// are attributed to modules and symbolised right here, once per distinct PC; a record's Python
// frames replace the _PyEval_EvalFrameDefault frames they ran in, py-spy --native style, and
// become FRAME_KIND_PYTHON frames, once per distinct (code, instruction)), API ids become
// ApiFunction entries, kernel names interned strings. FlushChunk() adds the cumulative Stats,
// encodes the Chunk (protobuf-lite, zstd via proto/framing) and writes it as one frame, so a file
// cut at any byte is readable up to its last complete chunk.
//
// Errors: the first failed write is final (leveldb's bg_error_): failed() turns true, error()
// says why, nothing more is written. The owner (Agent) disables recording and logs once.
//
// Memory: the pending chunk is bounded by the drain cadence and kMaxRecordsPerChunk (an early
// flush); interning tables grow with distinct stacks/PCs/strings, not with time.
//
// Thread safety: none. The Agent serialises Start/Drain/FlushChunk/Finish (writer thread, exit,
// exec) with one mutex.
#ifndef GPUSTALL_AGENT_WRITER_TRACE_WRITER_H_
#define GPUSTALL_AGENT_WRITER_TRACE_WRITER_H_

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "agent/writer/api_name.h"
#include "agent/writer/chunk_contributor.h"
#include "agent/symbolize/elf_symbolizer.h"
#include "agent/symbolize/module_map.h"
#include "agent/python/python_symbolizer.h"
#include "agent/python/stack_merge.h"
#include "agent/record/reused_stacks.h"
#include "agent/record/ring_recorder.h"
#include "agent/stacks/stack_table.h"
#include "agent/writer/trace_file.h"
#include "proto/batch_codec.h"
#include "proto/batch_wire.h"
#include "proto/framing.h"
#include "proto/gstrace.pb.h"

namespace gs {

// The capture mode the recorder holds, as the trace's CaptureInfo says it (the header's and a
// chunk's, when it changes).
void WriteCaptureMode(const RingRecorder::CaptureMode& mode, gpustall::trace::CaptureInfo* out);

// Describes CUDA device `ordinal` (its name, memory and SM limits) for the trace; false when it
// cannot (no driver mapped, an ordinal the driver does not know).
using DeviceDescriber = std::function<bool(uint32_t ordinal, gpustall::trace::DeviceInfo* out)>;

class TraceWriter final : private ChunkBuilder {
 public:
  static constexpr uint32_t kMaxRecordsPerChunk = 65536;

  // `recorder` must outlive the writer. `memory_bound` is reported in Stats.
  TraceWriter(RingRecorder* recorder, std::unique_ptr<TraceFile> file, ApiNameFunction api_names,
              uint64_t memory_bound);
  ~TraceWriter();

  // Writes the prelude and the header frame. header.capture() is also the base of every later
  // Chunk.capture (stack fields), whose mode fields come from Recorder::SetCaptureMode.
  bool Start(const gpustall::trace::TraceHeader& header);
  // Registers a producer of other records (sampler, NVTX, host stats); Drain() drains it after
  // the rings, FillStats() adds its counters. `contributor` must outlive the writer. Call before
  // Start() or between writer calls (same serialisation as every other call).
  void AddContributor(ChunkContributor* contributor) { contributors_.push_back(contributor); }
  // Asked once per device, when its first kernel is drained: the DeviceInfo goes into that chunk
  // (before the kernel's records, FORMAT.md). Unset: no devices are described. Same call rules.
  void SetDeviceDescriber(DeviceDescriber describer) { describe_device_ = std::move(describer); }
  // GPU work that started before `ns` (agent clock) is left out: a capture window's start, where
  // a capture source may still report work launched before the window recorded any call (simgpu's
  // device thread decides as it processes the work), which belongs to no window. Same call rules.
  void SetFirstActivityNs(uint64_t ns) { first_activity_ns_ = ns; }
  // Moves everything buffered into the pending chunk. Returns the number of records moved.
  size_t Drain();
  // True when the pending chunk should be written now, not at the next period.
  bool chunk_full() const { return records_in_chunk_ >= kMaxRecordsPerChunk; }
  // Writes the pending chunk (with Stats) if anything changed since the last one.
  bool FlushChunk();
  // Drain + FlushChunk + TraceEnd frame + close. Idempotent; later calls do nothing.
  bool Finish(gpustall::trace::EndReason reason, const std::string& detail);

  bool failed() const { return failed_; }
  const std::string& error() const { return error_; }
  uint64_t bytes_written() const { return bytes_written_; }
  // Ring records whose stack id came from one of their ring's recent stacks (RecentStacks); for tests.
  uint64_t stack_repeats() const { return stack_repeats_; }
  // Of them, those whose id came by their recorder reuse entry, without a compare; for tests.
  uint64_t stack_reuse_ids() const { return stack_reuse_ids_; }
  uint64_t chunks_written() const { return chunks_written_; }

 private:
  // The stacks of a ring's recent records, raw (native PCs, then Python frame refs, as recorded),
  // with their interned ids: a thread that records from a few places again and again (a launch
  // loop through four kernel stubs, whose stacks the recorder reuses) gets the id by a compare
  // instead of a merge and a hash lookup. Exact: the id is a function of the raw words (frame keys
  // are PCs and never-reused Python code ids).
  struct RecentStack {
    std::vector<uint64_t> raw;  // pc_count PCs, then python_count PythonFrameRefs
    int pc_count = -1;          // -1: nothing cached
    int python_count = 0;
    bool truncated = false, python_truncated = false;
    uint32_t id = 0;
  };
  struct RecentStacks {
    static constexpr uint32_t kEntries = 8;  // as many as the recorder's reuse sites
    RecentStack entries[kEntries];
    uint32_t next = 0;      // replaced next (round robin)
    uint32_t last_hit = 0;  // tried first
    // Per recorder reuse entry (RingRecordHeader::reuse_entry): the stack id of its last defining record, when
    // that record had no Python frames; 0: none. A reused record without Python frames has the
    // same native PCs, so the same id, with no compare (kRingFlagStackReused, ring.h).
    uint32_t reuse_ids[StackReuseTable::kEntries] = {};
    ReusedStacks reused;  // the PCs that the ring's reused records name
  };
  static bool SameStack(const RecentStack& cached, const StackView& stack, size_t pcs, size_t python);
  // The stack id of a ring record's stack: by its reuse entry, or InternRecordStack.
  template <typename View>
  uint32_t RecordStackId(const View& record, RecentStacks* recent);

  void DrainRing(size_t index, ThreadRing& ring);
  // `batch`: the index of the thread's ApiCallBatch encoder in this chunk, looked up (or begun)
  // at the ring's first call of a drain and kept for the rest (SIZE_MAX: not yet).
  void AddApiCall(uint64_t tid, const ApiCallView& call, RecentStacks* recent, size_t* batch);
  void AddHostWait(uint64_t tid, const HostWaitView& wait, RecentStacks* recent);
  uint32_t InternRecordStack(const StackView& stack, RecentStacks* recent);
  void DrainActivities();
  uint32_t LaunchConfigId(const GpuActivityEvent& kernel);
  void DescribeDevice(uint32_t device);
  // --- ChunkBuilder (for contributors) ---
  gpustall::trace::Chunk* chunk() override { return &chunk_; }
  uint32_t InternString(const std::string& value) override;
  uint32_t InternStack(const StackView& stack) override;
  void CountRecords(size_t n) override { records_in_chunk_ += static_cast<uint32_t>(n); }

  uint32_t FunctionId(const ApiCallEvent& event);
  size_t MergePythonFrames(const StackView& stack);
  void DescribeFrame(uint32_t frame_id, uint64_t pc);
  void DescribePythonFrame(uint32_t frame_id, uint64_t key);
  void UpdatePythonCapture();
  void AddModules(const std::vector<const ModuleInfo*>& modules);
  void FillStats(gpustall::trace::Stats* stats);         // this trace's (losses since Start)
  void FillProcessStats(gpustall::trace::Stats* stats);  // the counters as they are now
  bool WriteFrame(uint8_t type, const google::protobuf::MessageLite& message);
  // A frame in two steps, for a chunk whose batches are appended to payload_ after the message
  // (batch_wire.h): the message into payload_, then payload_ as a frame of `type`.
  void SerializePayload(const google::protobuf::MessageLite& message);
  bool WritePayload(uint8_t type);
  bool Fail(const std::string& what);

  RingRecorder* recorder_;
  std::unique_ptr<TraceFile> file_;
  ApiNameFunction api_names_;
  uint64_t memory_bound_;

  gpustall::trace::Chunk chunk_;
  gpustall::trace::CaptureInfo base_capture_;
  uint64_t sequence_ = 0;
  uint32_t records_in_chunk_ = 0;
  bool tables_changed_ = false;
  // The chunk's API call and activity batches are encoded straight to wire bytes (batch_wire.h)
  // and appended to the payload after chunk_'s other fields. Encoders are kept from chunk to chunk
  // (their column buffers keep their capacity); the first api_encoders_used_ hold this chunk's
  // batches.
  std::unordered_map<uint64_t, size_t> batch_of_thread_;  // tid -> index in api_encoders_
  std::vector<trace::ApiCallBatchWireEncoder> api_encoders_;
  size_t api_encoders_used_ = 0;
  std::unordered_map<uint64_t, size_t> wait_batch_of_thread_;  // tid -> index in wait_encoders_
  std::vector<trace::HostWaitBatchEncoder> wait_encoders_;
  std::vector<uint32_t> wait_function_ids_;  // HostWaitFunction -> string id (0: not yet interned)
  trace::GpuActivityBatchWireEncoder activity_encoder_;
  bool activity_batch_open_ = false;
  std::vector<PendingActivity> activities_;
  std::vector<GraphNodeEvent> graph_nodes_;
  std::vector<uint32_t> activity_name_ids_;  // name_index -> string id (0: not yet interned)
  // Kernel launch configurations, interned (LaunchConfig.id): grid, block, registers, static and
  // dynamic shared memory, flags. One lookup per kernel record: hashed, not ordered.
  using LaunchKey = std::array<uint32_t, 10>;
  struct LaunchKeyHash {
    size_t operator()(const LaunchKey& k) const {
      uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over the words
      for (uint32_t w : k) h = (h ^ w) * 0x100000001b3ull;
      return static_cast<size_t>(h);
    }
  };
  std::unordered_map<LaunchKey, uint32_t, LaunchKeyHash> launch_configs_;
  // The last few configurations looked up, tried first: a launch loop cycles through a handful
  // of kernels, so a compare answers where the hash and the map's probe would (the map's lookup
  // was the writer's costliest per-kernel step in a launch-bound loop's profile).
  using PackedLaunchKey = std::array<uint64_t, 5>;  // the same ten words, two by two
  struct RecentLaunch {
    PackedLaunchKey packed{};
    uint32_t id = 0;  // 0: empty
  };
  // The one after the last hit is tried first: a loop of k <= 4 kernels hits it every time.
  std::array<RecentLaunch, 4> recent_launches_;
  uint32_t next_recent_launch_ = 0;  // replaced next
  uint32_t last_recent_launch_ = 0;  // the last hit or insertion
  DeviceDescriber describe_device_;
  std::vector<bool> devices_described_;  // by ordinal: asked already (answered or not)
  std::vector<uint64_t> ring_serial_seen_;   // per ring slot: owner_serial already described
  std::vector<RecentStacks> recent_stacks_;  // per ring slot
  uint64_t stack_repeats_ = 0;
  uint64_t stack_reuse_ids_ = 0;
  std::vector<ChunkContributor*> contributors_;

  std::unordered_map<std::string, uint32_t> strings_;
  std::unordered_map<uint32_t, uint32_t> functions_;  // source << 16 | api_id -> id
  // The same ids by source and API id, for the ids every call looks up (runtime and driver
  // callback ids and the wrappers' rows are all below a few thousand): an index instead of the
  // map's hash and probe (~7% of the writer's samples in agent/writer/writer_bench.cc's profile).
  static constexpr size_t kFlatFunctionSources = 4;
  static constexpr uint16_t kFlatFunctionIds = 4096;
  std::vector<uint32_t> flat_function_ids_[kFlatFunctionSources];  // 0: not yet interned
  StackTable stacks_;
  ModuleMap modules_;
  bool modules_scanned_ = false;
  ElfSymbolizer symbolizer_;
  std::vector<uint32_t> frame_ids_scratch_;
  std::vector<std::pair<uint32_t, uint64_t>> new_frames_scratch_;
  // Python frames (when recorder->python() is enabled): merged into the native stack here.
  std::unique_ptr<PythonSymbolizer> python_symbolizer_;  // created on the first Python frame
  std::vector<NativeFrameKind> native_kinds_scratch_;
  std::vector<MergedFrame> merged_scratch_;
  std::vector<uint64_t> merged_keys_scratch_;
  std::string payload_, frame_;
  // zstd level 1: most of the gain (interned ids and deltas compress well) for little CPU; its
  // context is allocated once, at the first frame.
  trace::ZstdFrameEncoder frame_encoder_{1};

  // Cumulative counters (Stats).
  uint64_t api_calls_ = 0, activities_count_ = 0, stacks_truncated_ = 0, host_waits_ = 0;
  uint64_t first_activity_ns_ = 0;  // SetFirstActivityNs
  uint64_t bytes_written_ = 0, chunks_written_ = 0, write_errors_ = 0, memory_used_ = 0;
  uint64_t last_stats_signature_ = 0;
  gpustall::trace::Stats baseline_;  // FillProcessStats at Start: subtracted from the losses
  bool started_ = false, finished_ = false, failed_ = false;
  std::string error_;
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_WRITER_TRACE_WRITER_H_
