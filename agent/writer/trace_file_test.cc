#include "agent/writer/trace_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace gs {
namespace {

std::string TempDir() {
  char tmpl[] = "/tmp/gs_trace_file_test.XXXXXX";
  const char* dir = mkdtemp(tmpl);
  EXPECT_NE(dir, nullptr);
  return dir;
}

std::string ReadAll(const std::string& path) {
  std::string out;
  int fd = open(path.c_str(), O_RDONLY);
  char buf[256];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, n);
  close(fd);
  return out;
}

TEST(TraceFileTest, CreatesWithOwnerOnlyMode) {
  const std::string path = TempDir() + "/a.gstrace";
  std::string error, used;
  auto file = CreateTraceFile(path, &error, &used);
  ASSERT_NE(file, nullptr) << error;
  EXPECT_EQ(used, path);
  ASSERT_TRUE(file->Append("abc", 3, &error));
  ASSERT_TRUE(file->Close(&error));
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(ReadAll(path), "abc");
}

// An exec'd image keeps its pid, so the default pattern names the previous image's file again:
// that trace must survive, and the new one goes beside it.
TEST(TraceFileTest, NeverOverwritesAnExistingTrace) {
  const std::string dir = TempDir();
  const std::string path = dir + "/gpustall-h-7.gstrace";
  std::string error, first, second, third;
  auto a = CreateTraceFile(path, &error, &first);
  ASSERT_NE(a, nullptr) << error;
  ASSERT_TRUE(a->Append("old", 3, &error));
  ASSERT_TRUE(a->Close(&error));
  auto b = CreateTraceFile(path, &error, &second);
  ASSERT_NE(b, nullptr) << error;
  auto c = CreateTraceFile(path, &error, &third);
  ASSERT_NE(c, nullptr) << error;
  EXPECT_EQ(second, dir + "/gpustall-h-7.1.gstrace");
  EXPECT_EQ(third, dir + "/gpustall-h-7.2.gstrace");
  EXPECT_EQ(ReadAll(path), "old");
}

TEST(TraceFileTest, DoesNotFollowASymlink) {
  const std::string dir = TempDir();
  const std::string target = dir + "/victim";
  const std::string link = dir + "/t.gstrace";
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  std::string error, used;
  auto file = CreateTraceFile(link, &error, &used);
  ASSERT_NE(file, nullptr) << error;
  EXPECT_EQ(used, dir + "/t.1.gstrace");
  struct stat st;
  EXPECT_NE(lstat(target.c_str(), &st), 0) << "the symlink's target must not be created";
}

TEST(TraceFileTest, UnwritableFolderIsAnError) {
  std::string error;
  auto file = CreateTraceFile("/nonexistent-folder/x.gstrace", &error);
  EXPECT_EQ(file, nullptr);
  EXPECT_FALSE(error.empty());
}

// A write past RLIMIT_FSIZE would raise SIGXFSZ (default action: terminate) on the calling thread,
// which at exit is the application's: the file refuses it instead, and what fits stays written.
TEST(TraceFileTest, RefusesToPassTheFileSizeLimitInsteadOfRaisingSigxfsz) {
  const std::string dir = TempDir();
  const std::string path = dir + "/t.gstrace";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    signal(SIGXFSZ, SIG_DFL);
    rlimit limit{1000, 1000};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(10);
    std::string error;
    auto file = CreateTraceFile(path, &error);
    if (file == nullptr) _exit(11);
    const std::string block(600, 'x');
    if (!file->Append(block.data(), block.size(), &error)) _exit(12);  // 600 <= 1000
    if (file->Append(block.data(), block.size(), &error)) _exit(13);   // 1200 > 1000: refused
    if (error != "File too large (RLIMIT_FSIZE is 1000 bytes)") _exit(14);
    if (!file->Append(block.data(), 400, &error)) _exit(15);           // exactly 1000 still fits
    _exit(file->Close(&error) ? 0 : 16);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(ReadAll(path).size(), 1000u);
}

}  // namespace
}  // namespace gs
