// run_command_for_test.h — the tests' way to run a gsanalyze subcommand in-process as main() does:
// parse the arguments, run the command, keep its exit code and both streams; and the empty folder
// each test case writes its traces to.
#ifndef GPUSTALL_ANALYZER_CLI_COMMANDS_RUN_COMMAND_FOR_TEST_H_
#define GPUSTALL_ANALYZER_CLI_COMMANDS_RUN_COMMAND_FOR_TEST_H_

#include <filesystem>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/cli/args.h"
#include "gtest/gtest.h"

namespace gs::analyzer::cli {

struct Ran {
  int exit;
  std::string out, err;
};

// `command` is one of commands.h's Run* functions; arguments that do not parse fail the test.
inline Ran RunCommand(int (*command)(const CliArgs&, std::ostream&, std::ostream&),
                      const std::vector<std::string>& argv) {
  absl::StatusOr<CliArgs> args = ParseArgs(argv);
  EXPECT_TRUE(args.ok()) << args.status();
  if (!args.ok()) return {-1, "", ""};
  std::ostringstream out, err;
  const int exit = command(*args, out, err);
  return {exit, out.str(), err.str()};
}

// An empty folder for the running test case, `prefix` + its name under the test temp folder: ctest
// runs the cases of a fixture at once, in separate processes, so each needs its own.
inline std::string TestCaseFolder(const std::string& prefix) {
  namespace fs = std::filesystem;
  const std::string dir =
      (fs::path(::testing::TempDir()) / (prefix + ::testing::UnitTest::GetInstance()->current_test_info()->name()))
          .lexically_normal()
          .string();
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace gs::analyzer::cli

#endif  // GPUSTALL_ANALYZER_CLI_COMMANDS_RUN_COMMAND_FOR_TEST_H_
