// trace_builder.h — writes valid .gstrace files programmatically, for tests and benchmarks.
//
// Used by the trace/reader tests, the analyzer's unit and golden tests, and benchmarks that need
// tens of millions of events: records stream into the current chunk, which is framed and written
// to the file every `records_per_chunk` records, so memory stays bounded by one chunk plus the
// interned tables, whatever the trace length.
//
//   gpustall::trace::TraceHeader header;          // schema_version 0 -> kSchemaVersion
//   header.set_pid(42);
//   auto b = TraceBuilder::Create("/tmp/t.gstrace", header);
//   uint32_t launch = b->InternApiFunction("cudaLaunchKernel", API_CLASS_LAUNCH);
//   uint32_t stack = b->InternStackOfFunctions({"launch_step", "train", "main"});
//   ApiCallRecord call; call.thread_id = 7; call.enter_ns = 1000; call.exit_ns = 6000;
//   call.function = launch; call.stack = stack; call.correlation_id = 1;
//   b->AddApiCall(call);
//   ...
//   ASSERT_TRUE(b->Finish());
//
// Definitions always precede uses: everything interned goes into the chunk being built, which is
// written before (or with) the records that refer to it.
//
// Thread safety: none; one thread uses a builder. Not for production use (no fsync, no fork or
// signal handling): the agent has its own writer.
#ifndef GPUSTALL_PROTO_TESTING_TRACE_BUILDER_H_
#define GPUSTALL_PROTO_TESTING_TRACE_BUILDER_H_

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "proto/batch_codec.h"
#include "proto/format.h"
#include "proto/framing.h"
#include "proto/gstrace.pb.h"
#include "proto/records.h"

namespace gs::trace::testing {

class TraceBuilder {
 public:
  struct Options {
    uint32_t records_per_chunk = 16384;  // high-volume records per chunk before it is written
    int deflate_level = 0;               // 0: raw frames; 1..9: zlib-compressed frames (format 1)
    int zstd_level = 0;                  // > 0: zstd-compressed frames, as the agent writes them
    bool auto_stats = true;              // give every chunk a cumulative Stats of what was written
  };

  // Creates (truncates) `path`, writes the prelude and a header frame. If header.schema_version is
  // 0 it is set to kSchemaVersion (tests of version checks set it themselves). Returns nullptr and
  // sets *error (if non-null) when the file cannot be written.
  static std::unique_ptr<TraceBuilder> Create(const std::string& path,
                                              gpustall::trace::TraceHeader header,
                                              Options options, std::string* error = nullptr);
  static std::unique_ptr<TraceBuilder> Create(const std::string& path,
                                              gpustall::trace::TraceHeader header) {
    return Create(path, std::move(header), Options());
  }

  // Writes pending records and an end frame unless Finish/CloseWithoutEnd already ran.
  ~TraceBuilder();
  TraceBuilder(const TraceBuilder&) = delete;
  TraceBuilder& operator=(const TraceBuilder&) = delete;

  // --- interned tables (each returns the id; equal inputs return the same id) ---
  uint32_t InternString(std::string_view value);  // "" -> 0
  uint32_t AddModule(std::string_view path, std::string_view build_id, uint64_t load_address,
                     uint64_t size);
  // A native frame, unsymbolised (module 0: rel_pc is the absolute pc).
  uint32_t InternFrame(uint32_t module_id, uint64_t rel_pc);
  // A native frame with its symbol.
  uint32_t InternSymbolizedFrame(uint32_t module_id, uint64_t rel_pc, std::string_view function,
                                 std::string_view file, uint32_t line);
  uint32_t InternPythonFrame(std::string_view function, std::string_view file, uint32_t line);
  // Writes a later symbolisation of `frame_id` (as the agent does once it has symbolised a pc).
  void SymbolizeFrame(uint32_t frame_id, std::string_view function, std::string_view file,
                      uint32_t line);
  uint32_t InternStack(const std::vector<uint32_t>& frame_ids_leaf_first, bool truncated = false);
  // A stack of symbolised frames, one per function name (leaf first), each in a synthetic
  // module "test" at a pc derived from its name; file/line may be given as "file.cc:42" after a
  // '@', e.g. "load_batch@workload.cc:42".
  uint32_t InternStackOfFunctions(const std::vector<std::string>& functions_leaf_first);
  uint32_t InternApiFunction(std::string_view name, gpustall::trace::ApiClass api_class,
                             gpustall::trace::ApiSource source = gpustall::trace::API_SOURCE_INTERPOSER,
                             uint32_t raw_id = 0);
  void AddThread(uint64_t tid, std::string_view name, bool is_main = false);
  void AddDevice(const gpustall::trace::DeviceInfo& device);
  void AddLaunchConfig(const gpustall::trace::LaunchConfig& config);  // Chunk.launch_configs

  // --- records ---
  void AddApiCall(const ApiCallRecord& record);
  void AddActivity(const GpuActivityRecord& record);
  void AddMemoryEvent(const MemoryEventRecord& record);
  void AddSample(const SampleRecord& record);
  void AddNvtxRange(const NvtxRangeRecord& record);
  void AddHostWait(const HostWaitRecord& record);
  // Low-volume records go into the current chunk.
  void SetStats(const gpustall::trace::Stats& stats);  // replaces auto stats for this chunk
  void AddProcessStats(const gpustall::trace::ProcessStats& stats);
  void AddClockSync(const gpustall::trace::ClockSync& sync);
  void SetCapture(const gpustall::trace::CaptureInfo& capture);

  // Writes the current chunk (if it holds anything). False on a write error.
  bool FlushChunk();
  // Flushes, writes a TraceEnd frame and closes. False on a write error.
  bool Finish(gpustall::trace::EndReason reason = gpustall::trace::END_REASON_EXIT);
  // Flushes and closes without an end frame (a process that died).
  bool CloseWithoutEnd();

  uint64_t bytes_written() const { return bytes_written_; }
  uint64_t records_written() const { return records_written_; }  // high-volume records, flushed
  uint64_t records_added() const { return records_added_; }
  uint64_t chunks_written() const { return chunks_written_; }
  // File offset of every frame written, in order (the header frame first).
  const std::vector<uint64_t>& frame_offsets() const { return frame_offsets_; }

 private:
  TraceBuilder(std::FILE* file, Options options);
  bool WriteFrame(FrameType type, const std::string& payload);
  void RecordAdded();
  bool Close(bool write_end, gpustall::trace::EndReason reason);

  template <typename Encoder>
  struct PerThread {
    uint64_t tid;
    Encoder encoder;
  };

  std::FILE* file_;
  Options options_;
  bool closed_ = false;
  bool failed_ = false;
  gpustall::trace::Chunk chunk_;
  std::string payload_;
  std::vector<unsigned char> frame_;
  std::unique_ptr<ZstdFrameEncoder> zstd_;  // options_.zstd_level > 0, from the first frame
  uint32_t records_in_chunk_ = 0;
  bool user_stats_ = false;

  std::vector<PerThread<ApiCallBatchEncoder>> api_calls_;
  std::vector<PerThread<SampleBatchEncoder>> samples_;
  std::vector<PerThread<NvtxRangeBatchEncoder>> nvtx_;
  std::vector<PerThread<HostWaitBatchEncoder>> host_waits_;
  GpuActivityBatchEncoder activities_;
  bool have_activities_ = false;
  MemoryEventBatchEncoder memory_;
  bool have_memory_ = false;

  std::unordered_map<std::string, uint32_t> strings_;
  std::map<std::string, uint32_t> modules_;
  std::map<std::tuple<uint32_t, uint64_t, uint32_t, uint32_t, uint32_t, int>, uint32_t> frames_;
  std::map<std::pair<std::vector<uint32_t>, bool>, uint32_t> stacks_;
  std::map<std::pair<std::string, int>, uint32_t> functions_;
  uint32_t next_frame_id_ = 1;

  uint64_t bytes_written_ = 0;
  uint64_t records_written_ = 0;
  uint64_t records_added_ = 0;
  uint64_t chunks_written_ = 0;
  uint64_t api_calls_written_ = 0;
  uint64_t activities_written_ = 0;
  uint64_t samples_written_ = 0;
  uint64_t pending_api_calls_ = 0, pending_activities_ = 0, pending_samples_ = 0;
  std::vector<uint64_t> frame_offsets_;
};

}  // namespace gs::trace::testing

#endif  // GPUSTALL_PROTO_TESTING_TRACE_BUILDER_H_
