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
    for (const std::string& column : w.columns_) {
      std::string key;
      Json::AppendQuoted(column, &key);
      w.json_keys_.push_back(key + ":");
    }
    return w;
  }
  // `values` in column order. Each line is what Json::Dump(0) writes of the object of the columns
  // (unique names, in order) and their values, assembled without building that object: a long
  // trace has millions of rows.
  void Row(const std::vector<Json>& values) {
    csv_line_.clear();
    json_line_.assign("{");
    for (size_t i = 0; i < columns_.size(); ++i) {
      const Json& v = values[i];
      if (i) {
        csv_line_.push_back(',');
        json_line_.push_back(',');
      }
      AppendCsvField(v, &csv_line_);
      json_line_.append(json_keys_[i]);
      v.AppendCompact(&json_line_);
    }
    csv_line_.push_back('\n');
    json_line_.append("}\n");
    csv_.write(csv_line_.data(), static_cast<std::streamsize>(csv_line_.size()));
    jsonl_.write(json_line_.data(), static_cast<std::streamsize>(json_line_.size()));
  }
  absl::Status Close() {
    csv_.close();
    jsonl_.close();
    if (!csv_ || !jsonl_) return absl::DataLossError(absl::StrCat("error writing ", csv_path_));
    return absl::OkStatus();
  }

 private:
  // RFC 4180: a string with a comma, quote or line break is quoted, its quotes doubled.
  static void AppendCsvField(const Json& v, std::string* out) {
    switch (v.type()) {
      case Json::Type::kNull:
        return;
      case Json::Type::kString: {
        const std::string& s = v.as_string();
        if (s.find_first_of(",\"\n\r") == std::string::npos) {
          out->append(s);
          return;
        }
        out->push_back('"');
        for (char c : s) {
          if (c == '"') out->push_back('"');
          out->push_back(c);
        }
        out->push_back('"');
        return;
      }
      case Json::Type::kBool:
        out->append(v.as_bool() ? "true" : "false");
        return;
      default:
        v.AppendCompact(out);
    }
  }
  std::vector<std::string> columns_;
  std::vector<std::string> json_keys_;  // each column's name as a JSON key, with its colon
  std::string csv_line_, json_line_;    // the row being written
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
    // The rows wait for their trace's end in a file in the export's folder (idle_interval_rows.h).
    TableRows(const std::string& dir, TableWriter* intervals, TableWriter* stacks, TablesExportStats* stats)
        : RankSummaryObserver(/*keep_rows=*/true, dir), intervals_(*intervals), stacks_(*stacks), stats_(*stats) {}
    // The first trace whose rows could not be kept or read back; OK if none.
    const absl::Status& error() const { return error_; }

   private:
    void TraceSummarized(size_t index, const RankSummary& s, IdleIntervalRows* rows,
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
      // One row's cells, reused: a long trace has millions of rows.
      std::vector<Json> row;
      row.reserve(12 + kNumCauses);
      const Json rank = RankJson(s), host(s.host_name), pid(s.pid);
      absl::Status read = rows->ForEach([&](const IdleIntervalRow& r) {
        auto it = global_id.find(r.stack_id);
        row.clear();
        row.emplace_back(t);
        row.push_back(rank);
        row.push_back(host);
        row.push_back(pid);
        row.emplace_back(r.device);
        row.emplace_back(r.start_ns);
        row.emplace_back(r.end_ns);
        row.emplace_back(r.end_ns - r.start_ns);
        row.emplace_back(CauseName(r.cause));
        row.emplace_back(r.after_sync);
        row.emplace_back(r.after_sync_site);
        row.push_back(it == global_id.end() ? Json() : Json(it->second));
        AppendCauses(r.by_cause, &row);
        intervals_.Row(row);
        ++stats_.intervals;
      });
      if (!read.ok() && error_.ok()) error_ = read;
    }
    TableWriter& intervals_;
    TableWriter& stacks_;
    TablesExportStats& stats_;
    int64_t next_stack_id_ = 1;
    absl::Status error_;
  };
  TablesExportStats stats;
  TableRows table_rows(dir, &*intervals, &*stacks, &stats);
  AnalyzeHooks hooks;
  hooks.observers = {&table_rows};
  AnalysisOptions all_configs = options;
  all_configs.top_kernel_configs = std::numeric_limits<size_t>::max();
  absl::StatusOr<Analysis> analysis = AnalyzeTraces(std::move(traces), all_configs, hooks);
  if (!analysis.ok()) return analysis.status();
  if (!table_rows.error().ok()) return table_rows.error();
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
