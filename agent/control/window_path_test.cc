// window_path_test.cc — capture-window trace names.
#include "agent/control/window_path.h"

#include <gtest/gtest.h>

namespace gs {
namespace control {
namespace {

TEST(WindowPathTest, NumberGoesBeforeTheExtension) {
  EXPECT_EQ(WindowTracePath("/runs/host-r0-42.gstrace", 1), "/runs/host-r0-42.window-1.gstrace");
  EXPECT_EQ(WindowTracePath("./gpustall-h-42.gstrace", 12), "./gpustall-h-42.window-12.gstrace");
}

TEST(WindowPathTest, NamesWithoutExtensionGetASuffix) {
  EXPECT_EQ(WindowTracePath("/runs/trace", 2), "/runs/trace.window-2");
  EXPECT_EQ(WindowTracePath("/runs.d/trace", 2), "/runs.d/trace.window-2");
  EXPECT_EQ(WindowTracePath("/runs/.hidden", 3), "/runs/.hidden.window-3");
}

}  // namespace
}  // namespace control
}  // namespace gs
