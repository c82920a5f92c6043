// output_path.h — the trace file name from GS_OUTPUT.
//
// GS_OUTPUT is a folder (it ends in '/' or names an existing directory: the default file name
// gpustall-%h-%p.gstrace goes inside it) or a file pattern with %p pid, %h host, %r rank
// ("norank" outside a job), %t start time (UTC, YYYYMMDDTHHMMSSZ), %% a percent sign. A forked
// child whose pattern has no %p gets ".<pid>" appended, so it never truncates its parent's file.
//
// Thread safety: pure functions (ExpandOutputPath stats the folder).
#ifndef GPUSTALL_AGENT_CORE_CONFIG_OUTPUT_PATH_H_
#define GPUSTALL_AGENT_CORE_CONFIG_OUTPUT_PATH_H_

#include <cstdint>
#include <optional>
#include <string>

namespace gs {

struct OutputPathFacts {
  int64_t pid = 0;
  std::string host;
  std::optional<int> rank;
  int64_t start_unix_seconds = 0;
  bool forked_child = false;
};

std::string ExpandOutputPath(const std::string& pattern, const OutputPathFacts& facts);

}  // namespace gs

#endif  // GPUSTALL_AGENT_CORE_CONFIG_OUTPUT_PATH_H_
