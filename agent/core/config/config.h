// config.h — every GS_* setting, read once into a value.
//
// The settings are listed in config_table.h (one row each); this header turns the table into the
// Config struct. Parsing is a pure function of an environment lookup, so tests pass values in
// rather than setting environment variables.
//
// Thread safety: Config is a plain value; ParseConfig is reentrant (it allocates: call it on the
// activation path, never on a recording hot path).
#ifndef GPUSTALL_AGENT_CORE_CONFIG_CONFIG_H_
#define GPUSTALL_AGENT_CORE_CONFIG_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/core/config/config_table.h"
#include "agent/core/log.h"

namespace gs {

// Enum settings; the order of the values is the order of `choices` in config_table.h.
enum class StackMode : int { kNone = 0, kFramePointer = 1, kUnwind = 2 };
enum class CuptiMode : int { kAuto = 0, kOff = 1 };
enum class ClockSource : int { kAuto = 0, kSystem = 1 };
enum class SampleSignals : int { kUser = 0, kAny = 1, kOff = 2 };
// LogLevel (log.h) has quiet|warn|info|debug in that order.

// Where the process sits in a job, from the launchers' own variables (torchrun, SLURM, Open MPI,
// PMI). Not GS_* settings, but read at the same moment for the same reasons (file name %r,
// trace header).
struct JobPlacement {
  std::optional<int> rank;
  std::optional<int> local_rank;
  std::optional<int> world_size;
  std::optional<int> local_world_size;
  std::string job_id;
};

struct Config {
#define GS_CONFIG_FIELD(field, type, kind, env, def, lo, hi, choices, doc) type field;
  GS_CONFIG_SETTINGS(GS_CONFIG_FIELD)
#undef GS_CONFIG_FIELD

  JobPlacement job;

  // The agent records only when enabled and not disabled.
  bool recording_wanted() const { return enable && !disable; }
};

// Looks a variable up; returns nullptr when unset. ParseConfig calls it once per name.
using EnvLookup = const char* (*)(const char* name);

// The result of reading the settings. On error, `error` is the one line to print (without the
// "gpustall: " prefix), e.g. `GS_STACK_DEPTH="abc": expected an integer 1..128; profiling disabled`,
// and `config` holds the defaults.
struct ConfigResult {
  Config config;
  std::string error;
  bool ok() const { return error.empty(); }
};

// Reads every setting through `lookup` (getenv in production). Unset or empty variables take the
// default. The first bad value makes the result an error (one message, naming the variable and
// what it accepts). Values longer than kMaxSettingLength bytes are refused.
ConfigResult ParseConfig(EnvLookup lookup);
inline constexpr size_t kMaxSettingLength = 4096;

// The defaults alone (what ParseConfig gives for an empty environment).
Config DefaultConfig();

// Name/value pairs of the effective settings (name without the GS_ prefix), for the trace header.
std::vector<std::pair<std::string, std::string>> DescribeConfig(const Config& config);

// The README table: | Variable | Default | Accepted values | Meaning |, one row per setting.
std::string ConfigMarkdownTable();

}  // namespace gs

#endif  // GPUSTALL_AGENT_CORE_CONFIG_CONFIG_H_
