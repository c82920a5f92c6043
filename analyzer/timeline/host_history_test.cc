#include "analyzer/timeline/host_history.h"

#include "gtest/gtest.h"

namespace gs::analyzer {
namespace {

HostWait Wait(TimeNs start, TimeNs end) {
  HostWait w;
  w.start_ns = start;
  w.end_ns = end;
  w.thread = 1;
  return w;
}

Sample At(TimeNs t) {
  Sample s;
  s.time_ns = t;
  s.thread = 1;
  return s;
}

TEST(HostHistoryTest, WaitsArriveOutOfOrderAndAreKeptByStart) {
  HostHistory h(4, 100);
  h.AddWait(Wait(50, 60));
  h.AddWait(Wait(10, 20));
  h.AddWait(Wait(30, 40));
  const ThreadHistory* t = h.Thread(1);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->waits.size(), 3u);
  EXPECT_EQ(t->waits[0].start_ns, 10);
  EXPECT_EQ(t->waits[1].start_ns, 30);
  EXPECT_EQ(t->waits[2].start_ns, 50);
  EXPECT_EQ(h.retained(), 3u);
}

TEST(HostHistoryTest, PruneKeepsWaitsAGapOrAKeptSampleMayLieIn) {
  HostHistory h(4, 100);
  h.AddWait(Wait(0, 10));     // holds the sample at 5, the last before the prune point
  h.AddWait(Wait(11, 12));
  h.AddWait(Wait(14, 30));    // reaches past the prune point
  h.AddSample(At(5));
  h.AddSample(At(40));
  h.PruneThreadBefore(1, 20);
  const ThreadHistory* t = h.Thread(1);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->samples.size(), 2u);  // 5 stands for time after it
  // The sample at 5 was taken in [0, 10): that wait stays (it says the sample stands for no time
  // after 10); so do the ones behind it, by start order.
  ASSERT_EQ(t->waits.size(), 3u);

  h.AddSample(At(50));
  h.PruneThreadBefore(1, 45);  // keeps the sample at 40: waits that ended by then go
  ASSERT_EQ(t->samples.size(), 2u);
  EXPECT_EQ(t->samples[0].time_ns, 40);
  EXPECT_TRUE(t->waits.empty());
}

}  // namespace
}  // namespace gs::analyzer
