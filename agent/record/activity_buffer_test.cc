#include "agent/record/activity_buffer.h"

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace gs {
namespace {

GpuActivityEvent Kernel(const char* name, uint32_t correlation) {
  GpuActivityEvent a{};
  a.kind = ActivityKind::kKernel;
  a.correlation_id = correlation;
  a.name = name;
  return a;
}

// Names are found by CUPTI's pointer first: the same pointer with the same text is one name, the
// same text at another pointer is that name too, and a pointer whose text changed (a module
// unloaded, its name's memory reused for another kernel's) is a new name, never the old one.
TEST(ActivityBufferTest, NamesAreFoundByPointerButKeptByText) {
  ActivityBuffer buffer;
  buffer.Init(64);
  char reused[64];
  std::strcpy(reused, "kernel_a");
  const std::string copy_of_a = "kernel_a";
  buffer.Add(Kernel(reused, 1));
  buffer.Add(Kernel(reused, 2));
  buffer.Add(Kernel(copy_of_a.c_str(), 3));
  std::strcpy(reused, "kernel_b");  // same pointer, another name
  buffer.Add(Kernel(reused, 4));
  buffer.Add(Kernel(reused, 5));
  std::strcpy(reused, "kernel_a");  // and back
  buffer.Add(Kernel(reused, 6));
  buffer.Add(Kernel(nullptr, 7));
  buffer.Add(Kernel("", 8));

  std::vector<PendingActivity> out;
  buffer.TakeAll(&out);
  ASSERT_EQ(out.size(), 8u);
  std::vector<std::string> names;
  for (const PendingActivity& p : out) {
    EXPECT_EQ(p.activity.name, nullptr);  // the record carries the index, not CUPTI's pointer
    names.push_back(p.name_index == 0 ? "<none>" : buffer.NameAt(p.name_index));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"kernel_a", "kernel_a", "kernel_a", "kernel_b", "kernel_b",
                                             "kernel_a", "<none>", "<none>"}));
  EXPECT_EQ(out[0].name_index, out[2].name_index);
  EXPECT_EQ(out[0].name_index, out[5].name_index);
  EXPECT_NE(out[0].name_index, out[3].name_index);
  EXPECT_EQ(out[1].activity.correlation_id, 2u);
}

// More distinct names than the pointer cache holds, cycled: every record still gets its own name.
TEST(ActivityBufferTest, ManyNamesCycledKeepTheirIndices) {
  ActivityBuffer buffer;
  buffer.Init(1024);
  std::vector<std::string> names;
  for (int i = 0; i < 20; ++i) names.push_back("kernel_" + std::to_string(i));
  for (int round = 0; round < 5; ++round)
    for (int i = 0; i < 20; ++i) buffer.Add(Kernel(names[i].c_str(), static_cast<uint32_t>(round * 20 + i)));
  std::vector<PendingActivity> out;
  buffer.TakeAll(&out);
  ASSERT_EQ(out.size(), 100u);
  for (size_t k = 0; k < out.size(); ++k) {
    EXPECT_EQ(buffer.NameAt(out[k].name_index), names[k % 20]) << k;
    EXPECT_EQ(out[k].name_index, out[k % 20].name_index) << k;
  }
}

// A run added at once (CUPTI's buffer thread) keeps its order, and what does not fit is dropped
// and counted, record by record, as single adds would.
TEST(ActivityBufferTest, ARunPastTheCapacityKeepsWhatFitsAndCountsTheRest) {
  ActivityBuffer buffer;
  buffer.Init(4);
  GpuActivityEvent run[6];
  for (uint32_t i = 0; i < 6; ++i) run[i] = Kernel(i % 2 ? "odd" : "even", 100 + i);
  buffer.Add(run, 3);
  buffer.Add(run + 3, 3);
  EXPECT_EQ(buffer.added(), 4u);
  EXPECT_EQ(buffer.dropped(), 2u);
  std::vector<PendingActivity> out;
  buffer.TakeAll(&out);
  ASSERT_EQ(out.size(), 4u);
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(out[i].activity.correlation_id, 100 + i);
    EXPECT_EQ(buffer.NameAt(out[i].name_index), i % 2 ? "odd" : "even");
  }
  buffer.Add(run + 4, 2);  // room again after the writer took them
  EXPECT_EQ(buffer.added(), 6u);
  EXPECT_EQ(buffer.dropped(), 2u);
}

}  // namespace
}  // namespace gs
