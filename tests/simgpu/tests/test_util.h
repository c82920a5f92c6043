// test_util.h — small helpers shared by simgpu's tests: timing, running a program with extra
// environment, and reading the truth log (one flat JSON object per line).
#ifndef GPUSTALL_TESTS_SIMGPU_TESTS_TEST_UTIL_H_
#define GPUSTALL_TESTS_SIMGPU_TESTS_TEST_UTIL_H_

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "simgpu.h"

extern char** environ;

namespace simgpu_test {

constexpr uint64_t kMs = 1000000;

inline double MsSince(uint64_t start_ns) {
  return static_cast<double>(simgpuNowNs() - start_ns) / 1e6;
}

// Runs argv with the current environment plus `extra_env` ("K=V"); returns the exit status.
inline int RunProgram(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
  for (const auto& kv : extra_env) env_strings.push_back(kv);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);
  pid_t pid;
  if (posix_spawn(&pid, args[0], nullptr, nullptr, args.data(), envp.data()) != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

inline std::vector<std::string> ReadLines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The raw text of "key":<value> in a flat JSON object ("" if absent).
inline std::string JsonRaw(const std::string& line, const std::string& key) {
  std::string needle = "\"" + key + "\":";
  size_t pos = line.find(needle);
  if (pos == std::string::npos) return "";
  pos += needle.size();
  if (line[pos] == '"') {
    size_t end = line.find('"', pos + 1);
    return line.substr(pos + 1, end - pos - 1);
  }
  size_t end = line.find_first_of(",}", pos);
  return line.substr(pos, end - pos);
}

inline uint64_t JsonU64(const std::string& line, const std::string& key) {
  return std::strtoull(JsonRaw(line, key).c_str(), nullptr, 10);
}

// Lines of the truth log whose "kind" is `kind`.
inline std::vector<std::string> OfKind(const std::vector<std::string>& lines,
                                       const std::string& kind) {
  std::vector<std::string> out;
  for (const auto& l : lines) {
    if (JsonRaw(l, "kind") == kind) out.push_back(l);
  }
  return out;
}

inline std::string TempPath(const std::string& stem) {
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir && *dir ? dir : "/tmp") + "/simgpu-" + stem + "-" +
                     std::to_string(getpid()) + ".jsonl";
  std::remove(path.c_str());
  return path;
}

}  // namespace simgpu_test

#endif  // GPUSTALL_TESTS_SIMGPU_TESTS_TEST_UTIL_H_
