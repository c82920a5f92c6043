#include "agent/core/config/config.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <type_traits>

namespace gs {
namespace {

enum class Kind { kText, kOutputPattern, kBool, kInt, kEnum };

// One row of config_table.h, as data.
struct SettingSpec {
  const char* env;
  Kind kind;
  const char* def;
  long lo;
  long hi;
  const char* choices;
  const char* doc;
};

// Index of `word` in a '|'-separated list, or -1.
int ChoiceIndex(const char* choices, std::string_view word) {
  int index = 0;
  std::string_view rest(choices);
  while (true) {
    const size_t bar = rest.find('|');
    if (rest.substr(0, bar) == word) return index;
    if (bar == std::string_view::npos) return -1;
    rest.remove_prefix(bar + 1);
    ++index;
  }
}

std::string ChoiceName(const char* choices, int index) {
  std::string_view rest(choices);
  for (int i = 0; i < index; ++i) {
    const size_t bar = rest.find('|');
    if (bar == std::string_view::npos) return "?";
    rest.remove_prefix(bar + 1);
  }
  return std::string(rest.substr(0, rest.find('|')));
}

std::string Expected(const SettingSpec& s) {
  switch (s.kind) {
    case Kind::kText: return "expected text";
    case Kind::kOutputPattern:
      return "expected a folder or a file pattern whose % escapes are %p %h %r %t %%";
    case Kind::kBool: return "expected 1|0|true|false|yes|no|on|off";
    case Kind::kInt:
      return "expected an integer " + std::to_string(s.lo) + ".." + std::to_string(s.hi);
    case Kind::kEnum: return std::string("expected one of ") + s.choices;
  }
  return "";
}

// The value as it appears in a message: printable ASCII kept, the rest escaped, long values cut.
std::string Quote(std::string_view value) {
  std::string out = "\"";
  size_t shown = 0;
  for (unsigned char c : value) {
    if (++shown > 64) {
      out += "...";
      break;
    }
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out + "\"";
}

bool ValidOutputPattern(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') continue;
    if (i + 1 == text.size()) return false;
    const char c = text[++i];
    if (c != 'p' && c != 'h' && c != 'r' && c != 't' && c != '%') return false;
  }
  return true;
}

// Names code to load (GS_CUPTI_LIBRARY): a setting whose name ends in _LIBRARY.
bool NamesLibrary(const SettingSpec& s) {
  const std::string_view env(s.env);
  return env.size() > 8 && env.substr(env.size() - 8) == "_LIBRARY";
}

// Why a path-like value is refused, or nullptr. The agent writes only where GS_OUTPUT says and
// loads only the library a *_LIBRARY setting names, so those values must say exactly one place:
//   - no control characters (a newline in a path is a mistake or an attempt to forge log lines);
//   - GS_OUTPUT: no ".." component (the output location is the folder written, not a walk out
//     of it; relative paths without ".." are fine);
//   - *_LIBRARY: an absolute path (a bare name would go through the loader's search path, a
//     relative one through the job's working directory: neither is "the library it was told").
const char* PathProblem(const SettingSpec& s, std::string_view text) {
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) return "control characters are not allowed in a path";
  }
  if (s.kind == Kind::kOutputPattern) {
    for (size_t start = 0; start <= text.size();) {
      const size_t slash = std::min(text.find('/', start), text.size());
      if (text.substr(start, slash - start) == "..") return "'..' is not allowed in the output path";
      start = slash + 1;
    }
  }
  if (NamesLibrary(s) && !text.empty() && text[0] != '/') return "expected an absolute path";
  return nullptr;
}

bool ParseInto(const SettingSpec& s, std::string_view text, std::string* out) {
  if (s.kind == Kind::kOutputPattern && !ValidOutputPattern(text)) return false;
  if (text.find('\0') != std::string_view::npos) return false;
  if (PathProblem(s, text) != nullptr) return false;
  out->assign(text);
  return true;
}

bool ParseInto(const SettingSpec&, std::string_view text, bool* out) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  const int index = ChoiceIndex("1|true|yes|on|0|false|no|off", lower);
  if (index < 0) return false;
  *out = index < 4;
  return true;
}

bool ParseInto(const SettingSpec& s, std::string_view text, int* out) {
  std::string copy(text);
  if (copy.empty() || copy.size() > 18) return false;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(copy.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || value < s.lo || value > s.hi) return false;
  *out = static_cast<int>(value);
  return true;
}

template <typename E, typename = std::enable_if_t<std::is_enum_v<E>>>
bool ParseInto(const SettingSpec& s, std::string_view text, E* out) {
  const int index = ChoiceIndex(s.choices, text);
  if (index < 0) return false;
  *out = static_cast<E>(index);
  return true;
}

std::string Describe(const SettingSpec&, const std::string& v) { return v; }
std::string Describe(const SettingSpec&, bool v) { return v ? "1" : "0"; }
std::string Describe(const SettingSpec&, int v) { return std::to_string(v); }
template <typename E, typename = std::enable_if_t<std::is_enum_v<E>>>
std::string Describe(const SettingSpec& s, E v) {
  return ChoiceName(s.choices, static_cast<int>(v));
}

#define GS_CONFIG_SPEC(field, type, kind, env, def, lo, hi, choices, doc) \
  constexpr SettingSpec kSpec_##field{#env, Kind::kind, def, lo, hi, choices, doc};
GS_CONFIG_SETTINGS(GS_CONFIG_SPEC)
#undef GS_CONFIG_SPEC

// Applies one setting: `text` null/empty means the default. Returns false with `error` set.
template <typename T>
bool Apply(const SettingSpec& s, const char* text, T* out, std::string* error) {
  if (text == nullptr || text[0] == '\0') text = s.def;
  const size_t length = strnlen(text, kMaxSettingLength + 1);
  if (length > kMaxSettingLength) {
    *error = std::string(s.env) + "=" + Quote(std::string_view(text, 64)) + ": longer than " +
             std::to_string(kMaxSettingLength) + " bytes; profiling disabled";
    return false;
  }
  if (ParseInto(s, std::string_view(text, length), out)) return true;
  const char* problem = nullptr;
  if (s.kind == Kind::kText || s.kind == Kind::kOutputPattern) {
    problem = PathProblem(s, std::string_view(text, length));
  }
  *error = std::string(s.env) + "=" + Quote(std::string_view(text, length)) + ": " +
           (problem != nullptr ? problem : Expected(s)) + "; profiling disabled";
  return false;
}

std::optional<int> FirstInt(EnvLookup lookup, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* text = lookup(name);
    if (text == nullptr || text[0] == '\0' || strnlen(text, 16) > 12) continue;
    char* end = nullptr;
    errno = 0;
    const long value = std::strtol(text, &end, 10);
    if (errno == 0 && *end == '\0' && value >= 0 && value <= 1 << 30) return static_cast<int>(value);
  }
  return std::nullopt;
}

std::string FirstText(EnvLookup lookup, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* text = lookup(name);
    if (text != nullptr && text[0] != '\0' && strnlen(text, 256) < 256) return text;
  }
  return "";
}

const char* NoEnvironment(const char*) { return nullptr; }

}  // namespace

ConfigResult ParseConfig(EnvLookup lookup) {
  ConfigResult result;
  // Defaults first, so an error leaves a complete default Config behind.
#define GS_CONFIG_DEFAULT(field, type, kind, env, def, lo, hi, choices, doc) \
  Apply(kSpec_##field, nullptr, &result.config.field, &result.error);
  GS_CONFIG_SETTINGS(GS_CONFIG_DEFAULT)
#undef GS_CONFIG_DEFAULT
  if (!result.ok()) return result;  // a bad default: caught by ConfigTest.DefaultsParse

  Config parsed = result.config;
#define GS_CONFIG_READ(field, type, kind, env, def, lo, hi, choices, doc)              \
  if (result.ok() && !Apply(kSpec_##field, lookup(#env), &parsed.field, &result.error)) { \
  }
  GS_CONFIG_SETTINGS(GS_CONFIG_READ)
#undef GS_CONFIG_READ
  if (!result.ok()) return result;

  parsed.job.rank = FirstInt(lookup, {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"});
  parsed.job.local_rank =
      FirstInt(lookup, {"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"});
  parsed.job.world_size =
      FirstInt(lookup, {"WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"});
  parsed.job.local_world_size =
      FirstInt(lookup, {"LOCAL_WORLD_SIZE", "SLURM_NTASKS_PER_NODE", "OMPI_COMM_WORLD_LOCAL_SIZE"});
  parsed.job.job_id = FirstText(lookup, {"SLURM_JOB_ID", "TORCHELASTIC_RUN_ID", "PBS_JOBID", "LSB_JOBID"});
  result.config = std::move(parsed);
  return result;
}

Config DefaultConfig() { return ParseConfig(&NoEnvironment).config; }

std::vector<std::pair<std::string, std::string>> DescribeConfig(const Config& config) {
  std::vector<std::pair<std::string, std::string>> out;
#define GS_CONFIG_DESCRIBE(field, type, kind, env, def, lo, hi, choices, doc) \
  out.emplace_back(std::string(#env).substr(3), Describe(kSpec_##field, config.field));
  GS_CONFIG_SETTINGS(GS_CONFIG_DESCRIBE)
#undef GS_CONFIG_DESCRIBE
  return out;
}

std::string ConfigMarkdownTable() {
  std::string out =
      "| Variable | Default | Accepted values | Meaning |\n"
      "|---|---|---|---|\n";
  auto row = [&out](const SettingSpec& s) {
    std::string accepted;
    switch (s.kind) {
      case Kind::kText: accepted = "text"; break;
      case Kind::kOutputPattern: accepted = "folder or pattern (`%p %h %r %t %%`)"; break;
      case Kind::kBool: accepted = "`1`/`0` (also true/false, yes/no, on/off)"; break;
      case Kind::kInt: accepted = std::to_string(s.lo) + "–" + std::to_string(s.hi); break;
      case Kind::kEnum: {
        std::string_view rest(s.choices);
        while (!rest.empty()) {
          const size_t bar = rest.find('|');
          if (!accepted.empty()) accepted += ", ";
          accepted += "`" + std::string(rest.substr(0, bar)) + "`";
          if (bar == std::string_view::npos) break;
          rest.remove_prefix(bar + 1);
        }
        break;
      }
    }
    std::string def = s.def[0] == '\0' ? "(unset)" : "`" + std::string(s.def) + "`";
    out += "| `" + std::string(s.env) + "` | " + def + " | " + accepted + " | " + s.doc + " |\n";
  };
#define GS_CONFIG_ROW(field, type, kind, env, def, lo, hi, choices, doc) row(kSpec_##field);
  GS_CONFIG_SETTINGS(GS_CONFIG_ROW)
#undef GS_CONFIG_ROW
  return out;
}

}  // namespace gs
