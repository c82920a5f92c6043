// gs_agent_env — the agent's own rules, asked by the `gpustall` front end (and nothing else).
//
// The front end never re-implements what the agent decides (which GS_* values are valid, which
// launcher variables give the rank and the job, how an output pattern becomes a file name, where
// control sockets live): it runs this program with the environment the job will get and reads
// the answer. The answer comes from the same functions libgsagent.so runs (agent/config.h,
// agent/output_path.h, agent/control/run_folder.h), linked in, not copied.
//
//   gs_agent_env plan [--output DIR_OR_PATTERN]
//       Checks the environment as the agent will (every GS_* setting), then says where traces go:
//         rank=N            the rank the agent will put in %r (empty outside a job)
//         job_id=ID         the job id (launcher variables; the UTC start time outside a job),
//                           made safe for a file name
//         gs_output=PATH    the absolute GS_OUTPUT to export: --output (its %j replaced by the job
//                           id), else GS_OUTPUT, else ./gpustall-<job_id>/; a folder gets the
//                           rank-aware file name %h-r%r-%p.gstrace
//         trace_dir=DIR     its folder (to create; it may contain % tokens, then nothing is made)
//         glob=PATTERN      an fnmatch pattern matching the files this host/rank will write
//         run_folder=DIR    where on-demand processes listen (gpustall start/stop)
//   gs_agent_env run-folder
//       Prints the run folder alone.
//
// Exit status 0; 2 with one line `error=<what>` and `error_variable=GS_...` when a setting is
// invalid (the message is the agent's own, without "profiling disabled").
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "agent/core/config/config.h"
#include "agent/control/run_folder.h"
#include "agent/core/config/output_path.h"

namespace {

// The file name given to traces in a folder: rank-aware (the agent's own folder default,
// gpustall-%h-%p.gstrace, has no rank because a lone process has none).
constexpr const char* kFolderFilePattern = "%h-r%r-%p.gstrace";

const char* g_output_override = nullptr;  // the pattern under test, in place of GS_OUTPUT

const char* Lookup(const char* name) {
  if (g_output_override != nullptr && std::strcmp(name, "GS_OUTPUT") == 0) return g_output_override;
  return std::getenv(name);
}

std::string SafeComponent(const std::string& in) {
  std::string out = in;
  for (char& c : out) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  return out;
}

std::string UtcNow() {
  const time_t t = time(nullptr);
  struct tm tm;
  gmtime_r(&t, &tm);
  char buffer[32];
  strftime(buffer, sizeof(buffer), "%Y%m%dT%H%M%SZ", &tm);
  return buffer;
}

// %j becomes the job id; every other token (and %%) stays for the agent.
std::string ExpandJob(const std::string& in, const std::string& job_id) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%' && i + 1 < in.size()) {
      if (in[i + 1] == 'j') {
        out += job_id;
      } else {
        out += in.substr(i, 2);
      }
      ++i;
    } else {
      out += in[i];
    }
  }
  return out;
}

// An absolute path with '.' and '..' resolved as written (children may chdir; the agent refuses
// '..'); symbolic links are not resolved: the user named this path.
std::string Absolute(const std::string& path) {
  std::error_code error;
  std::filesystem::path p = std::filesystem::absolute(path, error);
  if (error) return path;
  std::string out = p.lexically_normal().string();
  if (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

bool IsFolder(const std::string& pattern) {
  struct stat st;
  return !pattern.empty() &&
         (pattern.back() == '/' || (stat(pattern.c_str(), &st) == 0 && S_ISDIR(st.st_mode)));
}

// fnmatch: %h and %r become this host and rank (rank unknown: any), other tokens '*', the rest
// literal ([x] quotes the pattern characters). A trailing '*' admits a forked child's ".<pid>".
std::string Glob(const std::string& name, const std::string& host, const gs::JobPlacement& job) {
  auto literal = [](const std::string& s) {
    std::string out;
    for (char c : s) {
      if (c == '*' || c == '?' || c == '[' || c == ']') {
        out += '[';
        out += c;
        out += ']';
      } else {
        out += c;
      }
    }
    return out;
  };
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] != '%' || i + 1 == name.size()) {
      out += literal(std::string(1, name[i]));
      continue;
    }
    switch (name[++i]) {
      case 'h': out += literal(host); break;
      case 'r': out += job.rank ? std::to_string(*job.rank) : "*"; break;
      case '%': out += '%'; break;
      default: out += '*'; break;
    }
  }
  return out + "*";
}

std::string HostName() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) return "localhost";
  return host;
}

int Fail(const std::string& error) {
  std::string message = error;
  const std::string suffix = "; profiling disabled";
  if (message.size() > suffix.size() &&
      message.compare(message.size() - suffix.size(), suffix.size(), suffix) == 0) {
    message.resize(message.size() - suffix.size());
  }
  std::printf("error=%s\n", message.c_str());
  const size_t eq = message.find('=');
  if (message.rfind("GS_", 0) == 0 && eq != std::string::npos) {
    std::printf("error_variable=%s\n", message.substr(0, eq).c_str());
  }
  return 2;
}

std::string RunFolder() { return gs::control::RunFolderPath(std::getenv("XDG_RUNTIME_DIR"), geteuid()); }

int Plan(const char* output_option) {
  // 1. The environment as it is: every setting the job will see, and the placement.
  gs::ConfigResult env = gs::ParseConfig(&Lookup);
  if (!env.ok()) return Fail(env.error);
  const gs::JobPlacement& job = env.config.job;
  const std::string job_id = SafeComponent(job.job_id.empty() ? UtcNow() : job.job_id);

  // 2. The pattern to export.
  std::string pattern;
  if (output_option != nullptr) {
    if (output_option[0] == '\0') return Fail("--output: empty");
    pattern = ExpandJob(output_option, job_id);
  } else if (const char* user = std::getenv("GS_OUTPUT"); user != nullptr && user[0] != '\0') {
    pattern = user;  // the user's (or an outer front end's), as is
  } else {
    pattern = "./gpustall-" + job_id + "/";
  }
  if (IsFolder(pattern)) {
    while (pattern.size() > 1 && pattern.back() == '/') pattern.pop_back();
    pattern += std::string("/") + kFolderFilePattern;
  }
  pattern = Absolute(pattern);

  // 3. The agent's verdict on that pattern (tokens, control characters, '..').
  g_output_override = pattern.c_str();
  gs::ConfigResult final_config = gs::ParseConfig(&Lookup);
  if (!final_config.ok()) return Fail(final_config.error);

  const size_t slash = pattern.rfind('/');
  const std::string dir = slash == 0 ? "/" : pattern.substr(0, slash);
  std::printf("rank=%s\n", job.rank ? std::to_string(*job.rank).c_str() : "");
  std::printf("job_id=%s\n", job_id.c_str());
  std::printf("gs_output=%s\n", pattern.c_str());
  std::printf("trace_dir=%s\n", dir.c_str());
  std::printf("glob=%s\n", Glob(pattern.substr(slash + 1), HostName(), job).c_str());
  std::printf("run_folder=%s\n", RunFolder().c_str());
  return 0;
}

int Usage() {
  std::fputs("usage: gs_agent_env plan [--output DIR_OR_PATTERN] | run-folder\n", stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  const std::string mode = argv[1];
  if (mode == "run-folder" && argc == 2) {
    std::printf("%s\n", RunFolder().c_str());
    return 0;
  }
  if (mode == "plan") {
    if (argc == 2) return Plan(nullptr);
    if (argc == 4 && std::strcmp(argv[2], "--output") == 0) return Plan(argv[3]);
  }
  return Usage();
}
