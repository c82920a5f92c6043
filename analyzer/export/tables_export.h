// tables_export.h — `gsanalyze export --tables DIR TRACE_OR_DIR...`: the analysis of a job as plain
// tables that existing engines (DuckDB, Spark, Dask, pandas) read as they are, so fleet-scale
// questions need no home-made engine. Each table is written twice, as CSV (header row, RFC 4180
// quoting) and as JSON lines, from one row definition:
//
//   idle_intervals.{csv,jsonl}  one steady-state idle gap per row: trace, rank, host, pid, device,
//                               start_ns, end_ns, duration_ns, cause (largest), idle_<cause>_ns
//                               for every cause (they sum to duration_ns), after_sync,
//                               after_sync_site, stack_id (the stack charged most of the gap)
//   stacks.{csv,jsonl}          stack_id, trace, rank, depth (0 = leaf), frame: one row per frame
//   ranks.{csv,jsonl}           one row per trace: the per-rank table of the report's "ranks"
//                               section (utilisation, sm_coverage_utilization and
//                               est_occupancy_utilization — empty/null when the trace does not
//                               say —, idle_<cause>_ns, steps, collective waits, straggler)
//   kernel_configs.{csv,jsonl}  every kernel launch configuration of every device (the report's
//                               kernel_configs[], analyzer/JSON.md, not cut to the top ten; grid
//                               and block as _x/_y/_z columns; launch_site: the leaf frame of
//                               its most under-filled launch stack)
//
// stack_id is unique across the export (traces' own stack ids collide). Times are nanoseconds on
// each trace's CLOCK_MONOTONIC; ranks.clock_offset_ns maps them onto the first rank's clock.
// Parquet is not written: no Parquet library is in this build's dependencies; DuckDB converts
// (`COPY (SELECT * FROM 'idle_intervals.csv') TO 'x.parquet'`).
//
// Thread safety: none needed.
#ifndef GPUSTALL_ANALYZER_EXPORT_TABLES_EXPORT_H_
#define GPUSTALL_ANALYZER_EXPORT_TABLES_EXPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/analysis/trace_file.h"
#include "analyzer/options/options.h"

namespace gs::analyzer {

struct TablesExportStats {
  uint64_t intervals = 0, stack_frames = 0, ranks = 0, kernel_configs = 0;
};

// Writes the tables of `traces` (opened by the job's intake, read over those descriptors) into
// `dir` (created if missing; files replaced). Errors: an unreadable trace, an unwritable folder
// (one line).
absl::StatusOr<TablesExportStats> ExportTables(std::vector<TraceFile> traces,
                                               const std::string& dir,
                                               const AnalysisOptions& options = AnalysisOptions());

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_EXPORT_TABLES_EXPORT_H_
