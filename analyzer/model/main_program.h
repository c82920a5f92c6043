// main_program.h — the program a traced process runs, as its command line names it: the Python
// script (`python [options] script.py`, `python -m package.module`) or, for a native program,
// its executable. That file is the user's own code wherever it lives: a script run from inside
// site-packages (a tool's bundled example, `gpustall demo`'s workload) is still the program,
// not an installed package (classify/site_frame.h).
//
// Built from the trace header (TraceHeader.command_line, executable, working_directory), which
// the agent reads from /proc/self at trace start. Immutable after construction; thread safe.
#ifndef GPUSTALL_ANALYZER_MODEL_MAIN_PROGRAM_H_
#define GPUSTALL_ANALYZER_MODEL_MAIN_PROGRAM_H_

#include <string>
#include <vector>

#include "analyzer/model/trace_tables.h"

namespace gs::analyzer {

class MainProgram {
 public:
  // None known (an imported trace, a header without a command line): owns no frame.
  MainProgram() = default;
  // `argv` as the process was started; `executable` is /proc/self/exe; `working_directory` the
  // folder a relative script path was given from. A Python interpreter (argv[0] or the
  // executable named python*) runs the script or module its options name; `-c`, `-` and an
  // interactive interpreter have no file of their own. Anything else is a native program.
  static MainProgram FromCommandLine(const std::vector<std::string>& argv, const std::string& executable,
                                     const std::string& working_directory);

  // True for a frame of the program itself: a Python frame whose file is the script (or the
  // `-m` module's file, or its package's __main__.py), or a native frame of the executable.
  bool Owns(const FrameInfo& frame) const;

  // The script's absolute path, "-m MODULE", the executable, or "" (tests, messages).
  std::string Describe() const;

 private:
  std::string script_;           // absolute, '.' and '..' resolved as written ("" if none)
  std::string script_as_given_;  // as argv had it (Python before 3.9 keeps it relative)
  std::string module_path_;      // "-m a.b": "/a/b" (matched as ".../a/b.py", ".../a/b/__main__.py")
  std::string module_name_;
  std::string executable_;       // native programs only
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_MODEL_MAIN_PROGRAM_H_
