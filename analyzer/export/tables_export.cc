#include "analyzer/export/tables_export.h"

#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analyzer/analysis/analyze_traces.h"
#include "analyzer/json/json_value.h"
#include "analyzer/ranks/multi_rank.h"
#include "analyzer/summary/summarize_trace.h"

namespace gs::analyzer {

namespace {

// One table, written as CSV and JSON lines from the same rows.
class TableWriter {
 public:
  static absl::StatusOr<TableWriter> Open(const std::string& dir, const std::string& name,
                                          std::vector<std::string> columns) {
    TableWriter w;
    w.columns_ = std::move(columns);
    w.csv_path_ = absl::StrCat(dir, "/", name, ".csv");
    w.jsonl_path_ = absl::StrCat(dir, "/", name, ".jsonl");
    w.csv_.open(w.csv_path_, std::ios::trunc);
    w.jsonl_.open(w.jsonl_path_, std::ios::trunc);
    if (!w.csv_ || !w.jsonl_) {
      return absl::PermissionDeniedError(absl::StrCat("cannot write ", w.csv_path_));
    }
    for (size_t i = 0; i < w.columns_.size(); ++i) w.csv_ << (i ? "," : "") << w.columns_[i];
    w.csv_ << "\n";
    return w;
  }
  // `values` in column order.
  void Row(const std::vector<Json>& values) {
    Json object = Json::Object();
    for (size_t i = 0; i < columns_.size(); ++i) {
      const Json& v = values[i];
      csv_ << (i ? "," : "") << CsvField(v);
      object.Set(columns_[i], v);
    }
    csv_ << "\n";
    jsonl_ << object.Dump(0) << "\n";
  }
  absl::Status Close() {
    csv_.close();
    jsonl_.close();
    if (!csv_ || !jsonl_) return absl::DataLossError(absl::StrCat("error writing ", csv_path_));
    return absl::OkStatus();
  }

 private:
  static std::string CsvField(const Json& v) {
    switch (v.type()) {
      case Json::Type::kNull:
        return "";
      case Json::Type::kString: {
        const std::string& s = v.as_string();
        if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
        std::string q = "\"";
        for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
        return q + "\"";
      }
      case Json::Type::kBool:
        return v.as_bool() ? "true" : "false";
      default:
        return v.Dump(0);
    }
  }
  std::vector<std::string> columns_;
  std::string csv_path_, jsonl_path_;
  std::ofstream csv_, jsonl_;
};

std::vector<std::string> WithCauseColumns(std::vector<std::string> columns) {
  for (int c = 0; c < kNumCauses; ++c) {
    columns.push_back(absl::StrCat("idle_", CauseName(static_cast<Cause>(c)), "_ns"));
  }
  return columns;
}

void AppendCauses(const CauseNs& by_cause, std::vector<Json>* row) {
  for (int c = 0; c < kNumCauses; ++c) row->push_back(by_cause[c]);
}

Json RankJson(const RankSummary& s) { return s.rank ? Json(*s.rank) : Json(); }

}  // namespace

absl::StatusOr<TablesExportStats> ExportTables(std::vector<TraceFile> traces,
                                               const std::string& dir,
                                               const AnalysisOptions& options) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::PermissionDeniedError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  absl::StatusOr<TableWriter> intervals = TableWriter::Open(
      dir, "idle_intervals",
      WithCauseColumns({"trace", "rank", "host", "pid", "device", "start_ns", "end_ns",
                        "duration_ns", "cause", "after_sync", "after_sync_site", "stack_id"}));
  if (!intervals.ok()) return intervals.status();
  absl::StatusOr<TableWriter> stacks =
      TableWriter::Open(dir, "stacks", {"stack_id", "trace", "rank", "depth", "frame"});
  if (!stacks.ok()) return stacks.status();

  // The rows of each trace are written as soon as it has been read (one pass, AnalyzeTraces).
  class TableRows final : public RankSummaryObserver {
   public:
    TableRows(TableWriter* intervals, TableWriter* stacks, TablesExportStats* stats)
        : RankSummaryObserver(/*keep_rows=*/true), intervals_(*intervals), stacks_(*stacks), stats_(*stats) {}

   private:
    void TraceSummarized(size_t index, const RankSummary& s, std::vector<IdleIntervalRow>* rows,
                         TraceStacks* trace_stacks) override {
      const auto t = static_cast<int64_t>(index);
      std::map<uint64_t, int64_t> global_id;
      for (const auto& [key, frames] : *trace_stacks) {
        int64_t id = next_stack_id_++;
        global_id[key] = id;
        for (size_t depth = 0; depth < frames.size(); ++depth) {
          stacks_.Row({id, t, RankJson(s), static_cast<int64_t>(depth), frames[depth]});
          ++stats_.stack_frames;
        }
      }
      for (const IdleIntervalRow& r : *rows) {
        auto it = global_id.find(r.stack_id);
        std::vector<Json> row = {t, RankJson(s), s.host_name, s.pid,
                                 r.device, r.start_ns, r.end_ns, r.end_ns - r.start_ns,
                                 CauseName(r.cause), r.after_sync, r.after_sync_site,
                                 it == global_id.end() ? Json() : Json(it->second)};
        AppendCauses(r.by_cause, &row);
        intervals_.Row(row);
        ++stats_.intervals;
      }
    }
    TableWriter& intervals_;
    TableWriter& stacks_;
    TablesExportStats& stats_;
    int64_t next_stack_id_ = 1;
  };
  TablesExportStats stats;
  TableRows table_rows(&*intervals, &*stacks, &stats);
  AnalyzeHooks hooks;
  hooks.observers = {&table_rows};
  AnalysisOptions all_configs = options;
  all_configs.top_kernel_configs = std::numeric_limits<size_t>::max();
  absl::StatusOr<Analysis> analysis = AnalyzeTraces(std::move(traces), all_configs, hooks);
  if (!analysis.ok()) return analysis.status();
  const std::vector<RankSummary>& summaries = table_rows.summaries();
  if (absl::Status st = intervals->Close(); !st.ok()) return st;
  if (absl::Status st = stacks->Close(); !st.ok()) return st;

  // The ranks table: the report's per-rank rows (AnalyzeRanks sorts them by rank; match back by
  // label, which carries rank, pid and host).
  RanksSection section = AnalyzeRanks(summaries);
  absl::StatusOr<TableWriter> ranks = TableWriter::Open(
      dir, "ranks",
      WithCauseColumns({"trace", "source", "rank", "host", "pid", "utilization",
                        "steady_utilization", "sm_coverage_utilization", "est_occupancy_utilization",
                        "wall_ns", "steady_idle_ns", "host_bound_idle_ns",
                        "steps", "collective_ns", "collective_wait_ns", "last_at_steps",
                        "delay_caused_ns", "clock_offset_ns", "straggler"}));
  if (!ranks.ok()) return ranks.status();
  for (size_t t = 0; t < summaries.size(); ++t) {
    const RankSummary& s = summaries[t];
    RankRow row;
    bool straggler = false;
    for (size_t i = 0; i < section.rows.size(); ++i) {
      if (section.rows[i].label == s.Label()) {
        row = section.rows[i];
        straggler = section.straggler.found && section.straggler.row == i;
      }
    }
    const std::optional<double> covered = s.SmCoverageUtilization(), occupied = s.EstOccupancyUtilization();
    std::vector<Json> values = {
        static_cast<int64_t>(t), s.source, RankJson(s), s.host_name, s.pid, s.Utilization(),
        s.SteadyUtilization(), covered ? Json(*covered) : Json(), occupied ? Json(*occupied) : Json(),
        s.wall_ns, s.steady_idle_ns, s.HostBoundIdle(),
        static_cast<uint64_t>(s.steps.size()), s.collective_ns, row.collective_wait_ns,
        row.last_at_steps, row.delay_caused_ns, row.clock_offset_ns, straggler};
    AppendCauses(s.idle_by_cause, &values);
    ranks->Row(values);
    ++stats.ranks;
  }
  if (absl::Status st = ranks->Close(); !st.ok()) return st;

  // Every kernel launch configuration, by under-filled time (the report's kernel_configs[]).
  absl::StatusOr<TableWriter> configs = TableWriter::Open(
      dir, "kernel_configs",
      {"trace", "rank", "device", "name", "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z",
       "registers_per_thread", "shared_memory_bytes", "count", "total_ns", "sms", "blocks_per_sm",
       "sm_coverage", "wave_coverage", "active_blocks_per_sm", "limiter", "theoretical_occupancy", "waves",
       "wave_efficiency", "est_occupancy", "underfilled_ns", "launch_site"});
  if (!configs.ok()) return configs.status();
  for (const KernelConfigStats& k : analysis->kernel_configs) {
    const LaunchConfig& c = k.config;
    const bool occ = k.occupancy_known;
    std::string site;
    if (!k.stacks.empty() && !k.stacks.front().frames.empty()) site = k.stacks.front().frames.front().function;
    configs->Row({static_cast<int64_t>(k.trace), k.trace < summaries.size() ? RankJson(summaries[k.trace]) : Json(),
                  k.device, k.name, c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1], c.block[2],
                  c.has_resources ? Json(c.registers_per_thread) : Json(),
                  c.has_resources ? Json(c.shared_memory_bytes) : Json(), k.count, k.total_ns, k.sm_count,
                  k.fill.blocks_per_sm, k.fill.sm_coverage, k.fill.wave_coverage,
                  occ ? Json(k.occupancy.active_blocks) : Json(), occ ? Json(LimiterNames(k.occupancy.limiters)) : Json(),
                  occ ? Json(k.occupancy.theoretical_occupancy) : Json(), occ ? Json(k.fill.waves) : Json(),
                  occ ? Json(k.fill.wave_efficiency) : Json(), occ ? Json(k.fill.est_occupancy) : Json(),
                  k.underfilled_ns, site});
    ++stats.kernel_configs;
  }
  if (absl::Status st = configs->Close(); !st.ok()) return st;
  return stats;
}

}  // namespace gs::analyzer
