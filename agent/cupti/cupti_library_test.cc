// Where the agent looks for CUPTI (cupti_library.h): the explicit setting, then beside the CUDA
// runtime the process loaded, and only then the loader's search path.
#include "agent/cupti/cupti_library.h"

#include <algorithm>

#include "gtest/gtest.h"

namespace gs {
namespace {

size_t IndexOf(const std::vector<std::string>& paths, const std::string& path) {
  return static_cast<size_t>(std::find(paths.begin(), paths.end(), path) - paths.begin());
}

TEST(CuptiLibraryTest, BesideTheLoadedRuntimeComesBeforeTheSearchPath) {
  const std::string wheel = "/venv/lib/python3.12/site-packages/nvidia/cu13/lib";
  const std::vector<std::string> paths = CuptiCandidatePaths("", wheel + "/libcudart.so.13");
  ASSERT_LT(IndexOf(paths, wheel + "/libcupti.so.13"), paths.size());
  ASSERT_LT(IndexOf(paths, "libcupti.so.13"), paths.size());
  EXPECT_EQ(IndexOf(paths, wheel + "/libcupti.so.13"), 0u);
  EXPECT_LT(IndexOf(paths, wheel + "/../../cuda_cupti/lib/libcupti.so.13"), IndexOf(paths, "libcupti.so.13"));
}

TEST(CuptiLibraryTest, TheExplicitSettingComesFirst) {
  const std::vector<std::string> paths = CuptiCandidatePaths("/opt/cupti/libcupti.so.13", "/cuda/lib64/libcudart.so.13");
  ASSERT_FALSE(paths.empty());
  EXPECT_EQ(paths[0], "/opt/cupti/libcupti.so.13");
  EXPECT_EQ(paths[1], "/cuda/lib64/libcupti.so.13");
}

TEST(CuptiLibraryTest, NoRuntimeLoadedYetMeansTheSearchPathThirteenFirst) {
  const std::vector<std::string> paths = CuptiCandidatePaths("", "");
  ASSERT_FALSE(paths.empty());
  EXPECT_EQ(paths[0], "libcupti.so.13");
  EXPECT_LT(IndexOf(paths, "libcupti.so.13"), IndexOf(paths, "libcupti.so.12"));
  EXPECT_LT(IndexOf(paths, "libcupti.so.12"), paths.size());
}

TEST(CuptiLibraryTest, ACuda12RuntimeGetsTheCupti12BesideItThenTwelveBeforeThirteen) {
  const std::string wheel = "/venv/lib/python3.11/site-packages/nvidia/cuda_runtime/lib";
  const std::vector<std::string> paths = CuptiCandidatePaths("", wheel + "/libcudart.so.12");
  ASSERT_FALSE(paths.empty());
  EXPECT_EQ(paths[0], wheel + "/libcupti.so.12");
  EXPECT_EQ(paths[1], wheel + "/../../cuda_cupti/lib/libcupti.so.12");
  EXPECT_EQ(IndexOf(paths, wheel + "/libcupti.so.13"), paths.size());  // never a 13 beside a 12
  EXPECT_LT(IndexOf(paths, "libcupti.so.12"), IndexOf(paths, "libcupti.so.13"));
  EXPECT_LT(IndexOf(paths, "libcupti.so.13"), paths.size());
}

TEST(CuptiLibraryTest, TheRuntimeMajorComesFromItsFileName) {
  EXPECT_EQ(CudaMajorOfLibrary("/usr/local/cuda/lib64/libcudart.so.12.6.77"), 12);
  EXPECT_EQ(CudaMajorOfLibrary("/x/nvidia/cu13/lib/libcudart.so.13"), 13);
  EXPECT_EQ(CudaMajorOfLibrary("/x/libcudart.so"), 0);
  EXPECT_EQ(CudaMajorOfLibrary(""), 0);
}

}  // namespace
}  // namespace gs
