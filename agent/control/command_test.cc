// command_test.cc — the control protocol's request parser and replies.
#include "agent/control/command.h"

#include <gtest/gtest.h>

namespace gs {
namespace control {
namespace {

TEST(CommandTest, ParsesTheThreeRequests) {
  Command c;
  std::string error;
  ASSERT_TRUE(ParseCommand("status\n", &c, &error)) << error;
  EXPECT_EQ(c.kind, Command::Kind::kStatus);
  ASSERT_TRUE(ParseCommand("stop\r\n", &c, &error)) << error;
  EXPECT_EQ(c.kind, Command::Kind::kStop);
  ASSERT_TRUE(ParseCommand("start", &c, &error)) << error;
  EXPECT_EQ(c.kind, Command::Kind::kStart);
  EXPECT_EQ(c.duration_ns, 0u);
  ASSERT_TRUE(ParseCommand("  start   30000000000 \n", &c, &error)) << error;
  EXPECT_EQ(c.kind, Command::Kind::kStart);
  EXPECT_EQ(c.duration_ns, 30000000000u);
}

TEST(CommandTest, RefusesWhatIsNotARequest) {
  Command c;
  std::string error;
  for (const char* bad : {"", "\n", "START", "start -5", "start 1.5", "start 10s", "start 1 2",
                          "status now", "stop please", "rm -rf /", "start 99999999999999999999"}) {
    error.clear();
    EXPECT_FALSE(ParseCommand(bad, &c, &error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

TEST(CommandTest, RefusesDurationsAboveADay) {
  Command c;
  std::string error;
  EXPECT_TRUE(ParseCommand("start " + std::to_string(kMaxWindowNs), &c, &error)) << error;
  EXPECT_FALSE(ParseCommand("start " + std::to_string(kMaxWindowNs + 1), &c, &error));
}

TEST(CommandTest, RefusesLongLinesAndEmbeddedNulOrNewline) {
  Command c;
  std::string error;
  EXPECT_FALSE(ParseCommand("status " + std::string(kMaxCommandLine, ' '), &c, &error));
  EXPECT_FALSE(ParseCommand(std::string("status\0x", 8), &c, &error));
  EXPECT_FALSE(ParseCommand("status\nstop\n", &c, &error));
}

TEST(CommandTest, RepliesAreOneLine) {
  EXPECT_EQ(OkReply("window=1 trace=/t"), "ok window=1 trace=/t\n");
  EXPECT_EQ(OkReply(""), "ok\n");
  EXPECT_EQ(ErrorReply("no capture window is recording"), "error no capture window is recording\n");
}

}  // namespace
}  // namespace control
}  // namespace gs
