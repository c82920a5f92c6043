// Real-CUPTI failures switched on by environment variables (see ../injected_faults.h). ctest
// runs each case with its variable set; run by hand, a case without its variable is skipped.
#include <cupti.h>

#include <cstdlib>
#include <cstring>

#include <gtest/gtest.h>

#include "activity_collector.h"

namespace {

void CUPTIAPI Ignore(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

TEST(InjectedFaultsTest, AnotherToolHoldsCupti) {
  const char* other = std::getenv("SIMGPU_CUPTI_SUBSCRIBER");
  if (other == nullptr) GTEST_SKIP() << "needs SIMGPU_CUPTI_SUBSCRIBER";
  CUpti_SubscriberHandle s = nullptr;
  EXPECT_EQ(cuptiSubscribe(&s, Ignore, nullptr), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  char old_name[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "gsagent";
  params.oldSubscriberName = old_name;
  params.oldSubscriberSize = sizeof(old_name);
  EXPECT_EQ(cuptiSubscribe_v2(&s, Ignore, nullptr, &params),
            CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  EXPECT_STREQ(old_name, other);
  EXPECT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
            CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  uint32_t version = 0;
  ASSERT_CUPTI_OK(cuptiGetVersion(&version));
}

TEST(InjectedFaultsTest, NoDriverLikeTheRealLibraryOnCi) {
  const char* fail = std::getenv("SIMGPU_CUPTI_FAIL");
  if (fail == nullptr || std::strcmp(fail, "1") != 0) GTEST_SKIP() << "needs SIMGPU_CUPTI_FAIL=1";
  CUpti_SubscriberHandle s = nullptr;
  EXPECT_EQ(cuptiSubscribe(&s, Ignore, nullptr), CUPTI_ERROR_UNKNOWN);
  EXPECT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_ERROR_UNKNOWN);
  EXPECT_EQ(cuptiActivityFlushAll(0), CUPTI_ERROR_UNKNOWN);
  uint32_t version = 0;
  ASSERT_CUPTI_OK(cuptiGetVersion(&version));
  EXPECT_EQ(version, static_cast<uint32_t>(CUPTI_API_VERSION));
  uint64_t t = 0;
  ASSERT_CUPTI_OK(cuptiGetTimestamp(&t));
  EXPECT_GT(t, 0u);
}

}  // namespace
