// MainProgram (main_program.h): which file a command line runs, and which frames are that file's.
#include "analyzer/model/main_program.h"

#include "gtest/gtest.h"

namespace gs::analyzer {
namespace {

FrameInfo Py(const std::string& file) { return FrameInfo{"f", file, 1, ""}; }

TEST(MainProgramTest, PythonScriptAfterTheInterpretersOptions) {
  const MainProgram p = MainProgram::FromCommandLine(
      {"/venv/bin/python", "-u", "-W", "ignore", "-Xdev", "../app/train.py", "--steps", "5"},
      "/usr/bin/python3.11", "/home/me/work");
  EXPECT_EQ(p.Describe(), "/home/me/app/train.py");
  EXPECT_TRUE(p.Owns(Py("/home/me/app/train.py")));
  EXPECT_TRUE(p.Owns(Py("../app/train.py")));  // Python before 3.9 keeps the path as given
  EXPECT_FALSE(p.Owns(Py("/home/me/app/model.py")));
  EXPECT_FALSE(p.Owns(FrameInfo{"main", "", 0, "/usr/bin/python3.11"}));  // the interpreter is not the program
}

TEST(MainProgramTest, ModuleRunWithDashM) {
  const MainProgram p =
      MainProgram::FromCommandLine({"python3", "-Bm", "trainer.cli", "fit"}, "/usr/bin/python3.12", "/w");
  EXPECT_EQ(p.Describe(), "-m trainer.cli");
  EXPECT_TRUE(p.Owns(Py("/venv/lib/python3.12/site-packages/trainer/cli.py")));
  EXPECT_TRUE(p.Owns(Py("/src/trainer/cli/__main__.py")));
  EXPECT_FALSE(p.Owns(Py("/src/trainer/cli/fit.py")));
  EXPECT_FALSE(p.Owns(Py("/src/mytrainer/cli.py")));
}

TEST(MainProgramTest, NoFileOfItsOwn) {
  for (const std::vector<std::string>& argv :
       std::vector<std::vector<std::string>>{{"python3", "-c", "import x"}, {"python3", "-"}, {"python3", "-i"}, {}}) {
    const MainProgram p = MainProgram::FromCommandLine(argv, "/usr/bin/python3", "/w");
    EXPECT_EQ(p.Describe(), "");
    EXPECT_FALSE(p.Owns(Py("/w/import x")));
    EXPECT_FALSE(p.Owns(Py("-")));
  }
}

TEST(MainProgramTest, NativeProgramOwnsItsExecutable) {
  const MainProgram p = MainProgram::FromCommandLine({"./app", "--steps", "3"}, "/opt/tool/bin/app", "/w");
  EXPECT_EQ(p.Describe(), "/opt/tool/bin/app");
  EXPECT_TRUE(p.Owns(FrameInfo{"main", "app.cc", 9, "/opt/tool/bin/app"}));
  EXPECT_FALSE(p.Owns(FrameInfo{"memcpy", "", 0, "/usr/lib/x86_64-linux-gnu/libc.so.6"}));
  EXPECT_FALSE(p.Owns(Py("/opt/tool/bin/app")));
}

}  // namespace
}  // namespace gs::analyzer
