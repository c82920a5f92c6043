// GraphReplayAccounting: replayed kernels followed through their executable node's clone record
// to the captured node and the call it was made in, summed per call site; what cannot be followed
// is counted apart.
#include "analyzer/accounting/graph_replays.h"

#include <gtest/gtest.h>

#include "analyzer/classify/gap_classifier.h"

namespace gs::analyzer {
namespace {

ApiCall Launch(uint32_t correlation, uint32_t stack) {
  ApiCall c;
  c.correlation = correlation;
  c.stack = stack;
  c.function = 7;
  c.api_class = ApiClass::kLaunch;
  return c;
}

GpuActivity Kernel(TimeNs ns) {
  GpuActivity k;
  k.start_ns = 1000;
  k.end_ns = 1000 + ns;
  k.kind = ActivityKind::kKernel;
  return k;
}

TEST(GraphReplayAccountingTest, ReplayedKernelsAreSummedByTheCallThatCapturedThem) {
  GraphReplayAccounting g;
  // Capture: nodes 1 and 2 made in launches 10 and 11 (stack 100), node 3 in launch 12 (stack 200).
  g.AddNode({1, 0, 10});
  g.AddNode({2, 0, 11});
  g.AddNode({3, 0, 12});
  g.AddCall(Launch(10, 100));
  g.AddCall(Launch(11, 100));
  g.AddCall(Launch(12, 200));
  g.AddCall(Launch(13, 300));  // made no node
  // Instantiation: executable nodes 21, 22, 23 cloned from 1, 2, 3.
  g.AddNode({21, 1, 0});
  g.AddNode({22, 2, 0});
  g.AddNode({23, 3, 0});
  for (int replay = 0; replay < 4; ++replay) {
    g.AddKernel(21, Kernel(10));
    g.AddKernel(22, Kernel(30));
    g.AddKernel(23, Kernel(60));
  }
  g.AddKernel(99, Kernel(5));  // a node the trace never saw made
  const GraphReplayAccounting::Result r = g.Finish();
  EXPECT_EQ(r.kernels, 13u);
  EXPECT_EQ(r.device_ns, 4 * 100 + 5);
  EXPECT_EQ(r.unresolved_kernels, 1u);
  EXPECT_EQ(r.unresolved_ns, 5);
  ASSERT_EQ(r.sites.size(), 2u);
  for (const auto& s : r.sites) {
    if (s.key == 100) {
      EXPECT_EQ(s.device_ns, 4 * 40);
      EXPECT_EQ(s.kernels, 8u);
      EXPECT_EQ(s.nodes, 2u);
    } else {
      EXPECT_EQ(s.key, 200u);
      EXPECT_EQ(s.device_ns, 4 * 60);
      EXPECT_EQ(s.nodes, 1u);
    }
    EXPECT_EQ(s.function, 7u);
  }
}

TEST(GraphReplayAccountingTest, ANodeWithoutACloneRecordStandsForItselfAndACallWithoutAStackIsItsFunction) {
  GraphReplayAccounting g;
  g.AddNode({5, 0, 40});
  g.AddCall(Launch(40, 0));
  g.AddKernel(5, Kernel(8));
  const GraphReplayAccounting::Result r = g.Finish();
  ASSERT_EQ(r.sites.size(), 1u);
  EXPECT_EQ(r.sites[0].key, kFunctionKeyBit | 7u);
  EXPECT_EQ(r.unresolved_kernels, 0u);
}

}  // namespace
}  // namespace gs::analyzer
