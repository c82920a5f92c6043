#include "analyzer/model/main_program.h"

#include <cstring>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"

namespace gs::analyzer {

namespace {

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool IsPythonInterpreter(const std::string& path) {
  return absl::StartsWith(BaseName(path), "python");
}

// `path` made absolute against `cwd`, with '.' and '..' resolved as written (as the interpreter
// does for the script's own path); symbolic links stay.
std::string Absolute(const std::string& path, const std::string& cwd) {
  std::filesystem::path p(path);
  if (p.is_relative()) p = std::filesystem::path(cwd) / p;
  std::string out = p.lexically_normal().string();
  if (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

}  // namespace

MainProgram MainProgram::FromCommandLine(const std::vector<std::string>& argv, const std::string& executable,
                                         const std::string& working_directory) {
  MainProgram p;
  if (argv.empty()) return p;
  if (!IsPythonInterpreter(argv[0]) && !IsPythonInterpreter(executable)) {
    p.executable_ = executable;
    return p;
  }
  // The interpreter's own options come first (python --help); the first other word is the
  // script. Options with a value: -c CMD, -m MOD, -W ARG, -X OPT (the value may be attached:
  // -Werror, -mpkg.mod, -um pkg) and --check-hash-based-pycs MODE.
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "-") return p;  // the script comes on stdin
    if (a == "--") {
      if (i + 1 < argv.size()) {
        p.script_as_given_ = argv[i + 1];
        p.script_ = Absolute(argv[i + 1], working_directory);
      }
      return p;
    }
    if (absl::StartsWith(a, "--")) {
      if (a == "--check-hash-based-pycs") ++i;
      continue;
    }
    if (a.size() < 2 || a[0] != '-') {
      p.script_as_given_ = a;
      p.script_ = Absolute(a, working_directory);
      return p;
    }
    for (size_t j = 1; j < a.size(); ++j) {
      if (std::strchr("cmWX", a[j]) == nullptr) continue;
      std::string value = a.substr(j + 1);
      if (value.empty() && i + 1 < argv.size()) value = argv[++i];
      if (a[j] == 'c') return p;  // a command string: no file of its own
      if (a[j] == 'm') {
        if (value.empty()) return p;
        p.module_name_ = value;
        p.module_path_ = "/" + absl::StrReplaceAll(value, {{".", "/"}});
        return p;
      }
      break;  // -W / -X took the rest
    }
  }
  return p;  // an interactive interpreter
}

bool MainProgram::Owns(const FrameInfo& f) const {
  if (!f.module.empty()) return !executable_.empty() && f.module == executable_;
  if (f.file.empty()) return false;
  if (!script_.empty()) return f.file == script_ || f.file == script_as_given_;
  if (!module_path_.empty()) {
    return absl::EndsWith(f.file, module_path_ + ".py") || absl::EndsWith(f.file, module_path_ + "/__main__.py");
  }
  return false;
}

std::string MainProgram::Describe() const {
  if (!script_.empty()) return script_;
  if (!module_name_.empty()) return "-m " + module_name_;
  return executable_;
}

}  // namespace gs::analyzer
