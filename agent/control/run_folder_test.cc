// run_folder_test.cc — the run folder is the user's alone, or it is refused.
#include "agent/control/run_folder.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace gs {
namespace control {
namespace {

class RunFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gs_run_folder_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    folder_ = base_ + "/gpustall-" + std::to_string(geteuid());
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + base_ + "'";
    ASSERT_EQ(system(cmd.c_str()), 0);
  }
  std::string base_, folder_;
};

TEST(RunFolderPathTest, UsesXdgRuntimeDirWhenAbsoluteElseTmp) {
  EXPECT_EQ(RunFolderPath("/run/user/1000", 1000), "/run/user/1000/gpustall-1000");
  EXPECT_EQ(RunFolderPath("/run/user/1000/", 1000), "/run/user/1000/gpustall-1000");
  EXPECT_EQ(RunFolderPath(nullptr, 7), "/tmp/gpustall-7");
  EXPECT_EQ(RunFolderPath("", 7), "/tmp/gpustall-7");
  EXPECT_EQ(RunFolderPath("relative/dir", 7), "/tmp/gpustall-7");
  EXPECT_EQ(SocketPath("/tmp/gpustall-7", 4242), "/tmp/gpustall-7/4242.sock");
}

TEST_F(RunFolderTest, CreatesTheFolderWithMode0700) {
  const mode_t old = umask(0);  // the folder's mode must not depend on the caller's umask
  std::string error;
  const bool ok = PrepareRunFolder(folder_, geteuid(), &error);
  umask(old);
  ASSERT_TRUE(ok) << error;
  struct stat st;
  ASSERT_EQ(lstat(folder_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  // An existing good folder is accepted again.
  EXPECT_TRUE(PrepareRunFolder(folder_, geteuid(), &error)) << error;
}

TEST_F(RunFolderTest, RefusesAFolderOthersCanOpen) {
  ASSERT_EQ(mkdir(folder_.c_str(), 0700), 0);
  ASSERT_EQ(chmod(folder_.c_str(), 0755), 0);
  std::string error;
  EXPECT_FALSE(PrepareRunFolder(folder_, geteuid(), &error));
  EXPECT_NE(error.find("mode 0755, expected 0700"), std::string::npos) << error;
  struct stat st;
  ASSERT_EQ(lstat(folder_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u) << "refused, not repaired";
}

TEST_F(RunFolderTest, RefusesASymlink) {
  const std::string target = base_ + "/elsewhere";
  ASSERT_EQ(mkdir(target.c_str(), 0700), 0);
  ASSERT_EQ(symlink(target.c_str(), folder_.c_str()), 0);
  std::string error;
  EXPECT_FALSE(PrepareRunFolder(folder_, geteuid(), &error));
  EXPECT_NE(error.find("symbolic link"), std::string::npos) << error;
}

TEST_F(RunFolderTest, RefusesAFile) {
  FILE* f = fopen(folder_.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fclose(f);
  std::string error;
  EXPECT_FALSE(PrepareRunFolder(folder_, geteuid(), &error));
  EXPECT_NE(error.find("not a directory"), std::string::npos) << error;
}

TEST_F(RunFolderTest, RefusesAFolderOfAnotherOwner) {
  ASSERT_EQ(mkdir(folder_.c_str(), 0700), 0);
  // As root, give it away for real; otherwise ask for a uid that is not ours (same check).
  uid_t expected = geteuid() + 1;
  if (geteuid() == 0) {
    ASSERT_EQ(chown(folder_.c_str(), 65534, 65534), 0);
    expected = 0;
  }
  std::string error;
  EXPECT_FALSE(PrepareRunFolder(folder_, expected, &error));
  EXPECT_NE(error.find("is owned by uid"), std::string::npos) << error;
}

TEST_F(RunFolderTest, MissingParentIsAnError) {
  std::string error;
  EXPECT_FALSE(PrepareRunFolder(base_ + "/no/such/gpustall-1", geteuid(), &error));
  EXPECT_NE(error.find("cannot create"), std::string::npos) << error;
}

}  // namespace
}  // namespace control
}  // namespace gs
