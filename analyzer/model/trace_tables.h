// trace_tables.h — per-trace interned tables and metadata, as the analysis sees them.
//
// The importer fills one TraceTables per trace file; the analysis keeps only ids (stack ids,
// function ids) in its hot loops and resolves them here when a report is built. Memory grows with
// the number of distinct strings/frames/stacks, never with the number of events.
//
// Thread safety: none (one importer fills it, then the analysis reads it).
#ifndef GPUSTALL_ANALYZER_MODEL_TRACE_TABLES_H_
#define GPUSTALL_ANALYZER_MODEL_TRACE_TABLES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/model/process_activity.h"
#include "analyzer/model/types.h"
#include "analyzer/occupancy/occupancy.h"

namespace gs::analyzer {

// A resolved frame: what a report prints. Empty strings / 0 mean unknown.
struct FrameInfo {
  std::string function;
  std::string file;
  uint32_t line = 0;
  std::string module;  // path of the ELF module (native frames); empty for Python frames
  // A frame of the traced program itself (main_program.h): the user's code wherever it lives.
  bool main_program = false;
  bool operator==(const FrameInfo& o) const {
    return line == o.line && function == o.function && file == o.file && module == o.module &&
           main_program == o.main_program;
  }
};

struct DeviceDescription {
  uint32_t index = 0;
  std::string name;
  uint64_t total_memory = 0;      // bytes; 0 = unknown
  uint32_t pcie_generation = 0;   // 0 = unknown
  uint32_t pcie_width = 0;        // 0 = unknown
  // The SM limits the occupancy figures need (CUPTI's device record; Kineto's deviceProperties).
  uint32_t sm_count = 0;          // 0 = unknown
  OccupancyDevice sm;             // meaningful when sm.max_threads_per_sm > 0
};

// What the trace says it lost. Cumulative counters (the last Stats record wins) plus what the
// reader found damaged. Every report prints these first ("losses are data").
struct LossCounters {
  uint64_t ring_dropped = 0;            // API calls dropped in the agent (full ring)
  uint64_t cupti_dropped = 0;           // CUPTI activity records dropped
  uint64_t other_dropped = 0;
  uint64_t samples_dropped = 0;
  uint64_t stacks_truncated = 0;
  uint64_t activities_without_time = 0;
  uint64_t corrupt_frames = 0;          // frames the reader skipped (checksum, decode)
  uint64_t missing_chunks = 0;          // gaps in chunk sequence numbers
  uint64_t truncated_bytes = 0;         // bytes after the last complete frame (file cut)
  bool clean_end = false;               // a TraceEnd frame was present
  // Found by the analysis:
  uint64_t late_activities = 0;         // arrived after the analysis window had passed them
  uint64_t unmatched_activities = 0;    // device work with no host call (correlation unknown)
  uint64_t folded_host_calls = 0;       // host history over its bound (oldest calls forgotten)
  void Add(const LossCounters& o);
  bool Any() const;
};

// A step of the traced program as the PyTorch profiler marks it (ProfilerStep#N), on the host.
struct ProfilerStep {
  int64_t number = 0;         // N
  TimeNs start_ns = 0, end_ns = 0;
};

// How an imported trace's times relate to wall-clock time (a .gstrace's header has its own
// clock snapshot instead). What multi-rank analysis aligns ranks by (ranks/multi_rank.h).
enum class WallClock : uint8_t {
  kUnknown = 0,    // times on a clock of their own
  kBaseTime = 1,   // times count from wall_ns_at_zero (Kineto's baseTimeNanoseconds)
  kEpoch = 2,      // times are nanoseconds since the epoch already (Kineto without a base time)
};

struct TraceInfo {
  std::string path;
  std::string host;
  int64_t pid = 0;
  std::optional<int32_t> rank;
  std::optional<int32_t> world_size;  // ranks in the job, where the trace says
  WallClock wall_clock = WallClock::kUnknown;  // imported traces
  int64_t wall_ns_at_zero = 0;        // kBaseTime: the wall time of the trace's time 0
  std::string capture_mode;   // e.g. "cupti", "interposition: ..."
  std::string cuda_runtime;   // the runtime the process had mapped ("libcudart.so.12"), "" unknown
  uint32_t cupti_cuda_major = 0;  // the CUPTI's CUDA release (12, 13); 0: no CUPTI or unknown
  uint32_t cupti_version = 0;     // its cuptiGetVersion; 0: no CUPTI or unknown
  bool native_stacks = false;
  bool python_stacks = false;
  bool sampling = false;
  bool nvtx = false;          // the agent was set up to receive NVTX ranges
  // ProfilerStep#N ranges (Kineto traces; accounting/profiler_steps.h), in file order.
  std::vector<ProfilerStep> profiler_steps;
  std::vector<DeviceDescription> devices;
  LossCounters losses;
  // The ProcessStats records: the traced process, its input workers, the host.
  ProcessActivityTable processes;
  // "rank 3 (pid 123 on host)", or "pid 123 on host".
  std::string Label() const;
};

// What the analysis asks of a trace's tables: names of API functions and threads, and stacks
// resolved to frames. Implemented over the reader's tables (importer.cc) and in memory (tests).
class TraceTables {
 public:
  virtual ~TraceTables() = default;
  // API name; "api#N" when unknown, "(unknown call)" for id 0.
  virtual std::string FunctionName(uint32_t function_id) const = 0;
  // "" when unknown.
  virtual std::string ThreadName(uint64_t tid) const = 0;
  // Frames of a stack, leaf (innermost) first; empty when unknown.
  virtual std::vector<FrameInfo> ResolveStack(uint32_t stack_id) const = 0;
  // An interned string (NVTX range and domain names); "" when unknown. Default: none known.
  virtual std::string StringValue(uint32_t string_id) const { (void)string_id; return {}; }
  // A kernel's launch configuration (GpuActivity::launch_config); null when unknown.
  virtual const LaunchConfig* LaunchConfigOf(uint32_t id) const { (void)id; return nullptr; }
};

// Tables built in memory (tests, synthetic traces).
class InMemoryTables : public TraceTables {
 public:
  void SetString(uint32_t id, std::string value) { strings_[id] = std::move(value); }
  void SetFunction(uint32_t id, std::string name) { functions_[id] = std::move(name); }
  void SetModule(uint32_t id, std::string path) { modules_[id] = std::move(path); }
  // Frames may be redefined with more fields filled (symbolisation); non-empty fields replace.
  void SetFrame(uint32_t id, uint32_t function_string, uint32_t file_string, uint32_t line,
                uint32_t module_id);
  void SetStack(uint32_t id, std::vector<uint32_t> frames_leaf_first) {
    stacks_[id] = std::move(frames_leaf_first);
  }
  void SetThreadName(uint64_t tid, std::string name) { threads_[tid] = std::move(name); }
  void SetLaunchConfig(uint32_t id, const LaunchConfig& config) { launch_configs_[id] = config; }

  const std::string& String(uint32_t id) const;
  FrameInfo ResolveFrame(uint32_t frame_id) const;
  std::string FunctionName(uint32_t function_id) const override;
  std::string ThreadName(uint64_t tid) const override;
  std::vector<FrameInfo> ResolveStack(uint32_t stack_id) const override;
  std::string StringValue(uint32_t string_id) const override { return String(string_id); }
  const LaunchConfig* LaunchConfigOf(uint32_t id) const override {
    auto it = launch_configs_.find(id);
    return it == launch_configs_.end() ? nullptr : &it->second;
  }

 private:
  struct RawFrame {
    uint32_t function = 0, file = 0, line = 0, module = 0;
  };
  absl::flat_hash_map<uint32_t, std::string> strings_;
  absl::flat_hash_map<uint32_t, std::string> functions_;
  absl::flat_hash_map<uint32_t, std::string> modules_;
  absl::flat_hash_map<uint32_t, RawFrame> frames_;
  absl::flat_hash_map<uint32_t, std::vector<uint32_t>> stacks_;
  absl::flat_hash_map<uint64_t, std::string> threads_;
  absl::flat_hash_map<uint32_t, LaunchConfig> launch_configs_;
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_MODEL_TRACE_TABLES_H_
