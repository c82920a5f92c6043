#include "agent/core/config/output_path.h"

#include <stdlib.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace gs {
namespace {

OutputPathFacts Facts() {
  OutputPathFacts f;
  f.pid = 1234;
  f.host = "node7";
  f.start_unix_seconds = 1764691200;  // 2025-12-02T16:00:00Z
  return f;
}

TEST(OutputPathTest, ExpandsEveryEscape) {
  OutputPathFacts f = Facts();
  f.rank = 3;
  EXPECT_EQ(ExpandOutputPath("/x/%h-%p-%r-%t-%%.gstrace", f), "/x/node7-1234-3-20251202T160000Z-%.gstrace");
}

TEST(OutputPathTest, NoRankOutsideAJob) {
  EXPECT_EQ(ExpandOutputPath("r%r.gstrace", Facts()), "rnorank.gstrace");
}

TEST(OutputPathTest, FolderGetsTheDefaultName) {
  EXPECT_EQ(ExpandOutputPath("/some/dir/", Facts()), "/some/dir/gpustall-node7-1234.gstrace");
  char dir[] = "/tmp/gs_output_path_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  EXPECT_EQ(ExpandOutputPath(dir, Facts()), std::string(dir) + "/gpustall-node7-1234.gstrace");
  rmdir(dir);
}

TEST(OutputPathTest, ForkedChildNeverReusesItsParentsName) {
  OutputPathFacts f = Facts();
  f.forked_child = true;
  EXPECT_EQ(ExpandOutputPath("/x/fixed.gstrace", f), "/x/fixed.gstrace.1234");
  EXPECT_EQ(ExpandOutputPath("/x/p%p.gstrace", f), "/x/p1234.gstrace");
}

}  // namespace
}  // namespace gs
