#include "agent/core/config/output_path.h"

#include <sys/stat.h>
#include <time.h>

namespace gs {

std::string ExpandOutputPath(const std::string& pattern_in, const OutputPathFacts& facts) {
  std::string pattern = pattern_in;
  struct stat st;
  if (!pattern.empty() && (pattern.back() == '/' ||
                           (stat(pattern.c_str(), &st) == 0 && S_ISDIR(st.st_mode)))) {
    if (pattern.back() != '/') pattern += '/';
    pattern += "gpustall-%h-%p.gstrace";
  }
  std::string out;
  bool has_pid = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    switch (pattern[++i]) {
      case 'p':
        out += std::to_string(facts.pid);
        has_pid = true;
        break;
      case 'h': out += facts.host.empty() ? "localhost" : facts.host; break;
      case 'r': out += facts.rank ? std::to_string(*facts.rank) : "norank"; break;
      case 't': {
        const time_t t = static_cast<time_t>(facts.start_unix_seconds);
        struct tm tm;
        gmtime_r(&t, &tm);
        char buffer[32];
        strftime(buffer, sizeof(buffer), "%Y%m%dT%H%M%SZ", &tm);
        out += buffer;
        break;
      }
      case '%': out += '%'; break;
      default:  // rejected by Config; kept literally if it ever gets here
        out += '%';
        out += pattern[i];
        break;
    }
  }
  if (facts.forked_child && !has_pid) out += "." + std::to_string(facts.pid);
  return out;
}

}  // namespace gs
