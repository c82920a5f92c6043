// The progress line and the colour decision (progress.h, terminal.h). The end-to-end
// terminal behaviour (a real pty, a pipe) is tty_test.py's.
#include "analyzer/cli/terminal/progress.h"

#include <sstream>

#include "analyzer/cli/terminal/terminal.h"
#include "gtest/gtest.h"

namespace gs::analyzer::cli {
namespace {

using std::chrono::milliseconds;

struct FakeClock {
  std::chrono::steady_clock::time_point now{};
  ProgressLine::Options Options() {
    ProgressLine::Options o;
    o.clock = [this] { return now; };
    return o;
  }
};

TEST(ProgressLineTest, QuietForQuickRunsThenThrottled) {
  FakeClock clock;
  std::ostringstream err;
  ProgressLine line(&err, true, clock.Options());
  line.Update(0, 1, "/tmp/a.gstrace", 10, 100);
  EXPECT_EQ(err.str(), "") << "nothing before the delay";
  clock.now += milliseconds(350);
  line.Update(0, 1, "/tmp/a.gstrace", 50, 100);
  EXPECT_EQ(err.str(), "\ranalysing a.gstrace  50%  50 B of 100 B");
  clock.now += milliseconds(20);
  line.Update(0, 1, "/tmp/a.gstrace", 60, 100);
  EXPECT_EQ(line.redraws(), 1u) << "at most one redraw per interval";
  clock.now += milliseconds(150);
  line.Update(0, 1, "/tmp/a.gstrace", 70, 100);
  EXPECT_EQ(line.redraws(), 2u);
  line.Finish();
  const std::string s = err.str();
  const size_t cols = std::string("analysing a.gstrace  70%  70 B of 100 B").size();
  EXPECT_EQ(s.substr(s.size() - cols - 2), "\r" + std::string(cols, ' ') + "\r") << "the line is erased";
  EXPECT_FALSE(line.drawn());
}

TEST(ProgressLineTest, DisabledWritesNothing) {
  FakeClock clock;
  std::ostringstream err;
  {
    ProgressLine line(&err, false, clock.Options());
    clock.now += milliseconds(5000);
    line.Update(0, 2, "x.gstrace", 1, 2);
  }
  EXPECT_EQ(err.str(), "");
}

TEST(ProgressLineTest, TextNamesTheFileOfSeveral) {
  EXPECT_EQ(ProgressText(1, 3, "dir/b.gstrace", 3 << 20, 4 << 20), "analysing 2/3 b.gstrace  75%  3.00 MiB of 4.00 MiB");
  EXPECT_EQ(ProgressText(0, 1, "c.gstrace", 5, 0), "analysing c.gstrace  5 B");
}

TEST(TerminalTest, ColourOnlyOnATerminalWithoutNoColor) {
  EXPECT_TRUE(ColorWanted(true, nullptr));
  EXPECT_TRUE(ColorWanted(true, ""));  // no-color.org: only a non-empty value disables
  EXPECT_FALSE(ColorWanted(true, "1"));
  EXPECT_FALSE(ColorWanted(true, "0"));  // any non-empty value, even "0"
  EXPECT_FALSE(ColorWanted(false, nullptr));
}

}  // namespace
}  // namespace gs::analyzer::cli
