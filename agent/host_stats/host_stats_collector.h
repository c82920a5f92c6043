// host_stats_collector.h — CPU use and state of the traced process and of the processes it forks
// or spawns (DataLoader workers: fork, spawn and forkserver start methods), and the host's cores
// and load, as ProcessStats records (proto/gstrace.proto), at a low rate, from /proc.
//
// Why the writer thread: everything here is file reads, parsing and allocation, which the hot
// path must never do; the TraceWriter calls DrainInto every drain (~10 ms) and the collector
// decides itself whether a state probe or a record period is due, so it needs no thread, timer
// or signal of its own.
//
// What a period costs (GS_PROCESS_STATS_MS, default 500 ms): for every tracked process, one
// /proc/<pid>/stat, status, io and cmdline read, plus the descendant search (one `children` file per thread
// of every tracked process); state probes (every period/5, at least 10 ms) read the `stat` of
// each thread of each descendant (at most kMaxThreadsProbed per process, the threads listed at
// the last search) and the traced
// process's main thread only (its own threads are the sampler's business, and it has many);
// launchers and helpers (role OTHER_CHILD) are not probed.
// The writer-thread CPU time spent here is measured and written into every HostStats
// (collection_ns), so each trace carries its own cost.
//
// Descendants: found through /proc/<pid>/task/<tid>/children (CONFIG_PROC_CHILDREN, present on
// common kernels), else by one bounded scan of /proc/*/stat per period (ppid links; at most
// kMaxScannedEntries entries). Breadth-first from the traced process, at most
// Options::max_processes tracked (the traced one included) and kMaxDepth levels deep: the rest
// is counted in HostStats.untracked_processes, not followed.
//
// Roles: the traced process is MAIN; a descendant is OTHER_CHILD when it has children of its
// own (a launcher such as multiprocessing's forkserver) or was exec'd as one of Python's helper
// processes (resource_tracker, forkserver, semaphore_tracker: its command line names the
// module and differs from its parent's, which tells the helper from the workers the forkserver
// forks, whose command lines are its copies); every other descendant is a DATA_WORKER.
//
// Children that load the agent themselves (LD_PRELOAD is inherited) write their own traces;
// these records are the parent's view of them.
//
// Thread safety: DrainInto / CollectAt on one thread at a time (the writer thread).
// Fork: a child forked from the traced process inherits this object and never calls it (the
// agent resets to dormant in the child and builds its own at the child's activation).
#ifndef GPUSTALL_AGENT_HOST_STATS_HOST_STATS_COLLECTOR_H_
#define GPUSTALL_AGENT_HOST_STATS_HOST_STATS_COLLECTOR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "agent/writer/chunk_contributor.h"
#include "agent/host_stats/proc_parse.h"

namespace gs {

class HostStatsCollector final : public ChunkContributor {
 public:
  static constexpr size_t kMaxThreadsProbed = 16;      // per descendant per probe
  static constexpr size_t kMaxThreadsSearched = 512;   // per process, for `children` files
  static constexpr size_t kMaxScannedEntries = 8192;   // /proc entries per fallback scan
  static constexpr uint32_t kMaxDepth = 4;             // traced process = 0

  struct Options {
    uint32_t period_ms = 500;      // record period (> 0)
    uint32_t probe_ms = 0;         // 0: period_ms / 5, at least 10
    size_t max_processes = 64;     // tracked processes, the traced one included
    std::string proc_root = "/proc";  // tests point this at a fixture tree
    int64_t self_pid = 0;          // 0: getpid()
    // Force the /proc scan even where `children` files exist (tests of the fallback).
    bool force_scan = false;
  };

  explicit HostStatsCollector(const Options& options);

  // ChunkContributor: takes a probe and/or writes a period's records when due.
  size_t DrainInto(ChunkBuilder* builder) override;

  // The same at an explicit time (tests drive the clock). Returns the records added.
  size_t CollectAt(uint64_t now_ns, ChunkBuilder* builder);

  bool uses_children_files() const { return use_children_files_; }
  uint64_t collection_ns() const { return collection_ns_; }
  uint64_t collections() const { return collections_; }
  uint32_t probe_ms() const { return probe_ms_; }

 private:
  struct Tracked {
    int64_t pid = 0;
    int64_t ppid = 0;
    uint32_t depth = 0;
    uint64_t start_ticks = 0;
    bool helper = false;         // exec'd as a known helper process
    bool has_children = false;   // as of the last search
    std::string cmdline;         // NUL-separated, capped
    uint64_t probes = 0, running = 0, disk_wait = 0, sleeping = 0;
    bool seen = false;           // found by the current search
    std::vector<int64_t> tids;   // threads to probe (listed at each search; <= kMaxThreadsProbed)
  };

  void Discover();
  // Children of every thread of `pid`; its thread ids (at most kMaxThreadsProbed) into `tids`.
  void ListChildren(int64_t pid, std::vector<int64_t>* out, std::vector<int64_t>* tids);
  void ScanParents();  // fallback: fills scan_children_
  void Probe();
  void ProbeOne(Tracked* t);
  size_t Record(uint64_t now_ns, ChunkBuilder* builder);
  bool ReadFile(const char* path, size_t max_bytes);  // into buffer_
  std::string ReadCmdline(int64_t pid);

  Options options_;
  int64_t self_pid_ = 0;
  uint32_t probe_ms_ = 0;
  uint64_t tick_ns_ = 10000000;   // one clock tick (USER_HZ) in ns
  uint64_t page_bytes_ = 4096;
  bool use_children_files_ = true;
  uint64_t next_probe_ns_ = 0;
  uint64_t next_record_ns_ = 0;
  bool started_ = false;

  std::vector<Tracked> tracked_;          // breadth-first order, the traced process first
  uint32_t untracked_ = 0;
  std::unordered_map<int64_t, std::vector<int64_t>> scan_children_;  // fallback mode only
  std::string buffer_;
  std::string path_;
  std::vector<int64_t> children_scratch_;
  uint64_t collection_ns_ = 0;
  uint64_t collections_ = 0;
};

// True when `cmdline` (NUL-separated argv) runs one of CPython multiprocessing's helper
// processes (resource_tracker, forkserver, semaphore_tracker). Exposed for tests.
bool IsPythonHelperCommandLine(const std::string& cmdline);

}  // namespace gs

#endif  // GPUSTALL_AGENT_HOST_STATS_HOST_STATS_COLLECTOR_H_
