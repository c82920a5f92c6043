// Callback API on simgpu: subscription rules, which callbacks fire, and what they carry.
#include <cuda_runtime_api.h>
#include <cupti.h>

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "activity_collector.h"
#include "simgpu.h"

namespace {

struct Seen {
  CUpti_CallbackDomain domain = CUPTI_CB_DOMAIN_INVALID;
  CUpti_CallbackId cbid = 0;
  CUpti_ApiCallbackSite site = CUPTI_API_ENTER;
  std::string function_name;
  std::string symbol_name;
  uint32_t correlation_id = 0;
  CUcontext context = nullptr;
  uint32_t context_uid = 0;
  cudaError_t exit_result = cudaErrorUnknown;
  // cudaMemcpy_v3020_params, copied while the pointer is valid (inside the callback).
  cudaMemcpy_v3020_params memcpy_params{};
  uint64_t correlation_data_at_exit = 0;
  CUstream stream = nullptr;  // RESOURCE / SYNCHRONIZE
};

std::mutex g_mu;
std::vector<Seen> g_seen;

std::vector<Seen> SeenSoFar() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_seen;
}

void CUPTIAPI Callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                       const void* cbdata) {
  EXPECT_EQ(userdata, &g_seen);
  Seen s;
  s.domain = domain;
  s.cbid = cbid;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    const auto* d = static_cast<const CUpti_CallbackData*>(cbdata);
    s.site = d->callbackSite;
    s.function_name = d->functionName ? d->functionName : "";
    s.symbol_name = d->symbolName ? d->symbolName : "";
    s.correlation_id = d->correlationId;
    s.context = d->context;
    s.context_uid = d->contextUid;
    if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020) {
      s.memcpy_params = *static_cast<const cudaMemcpy_v3020_params*>(d->functionParams);
    }
    // correlationData round trip: write at ENTER, read back at EXIT.
    if (d->callbackSite == CUPTI_API_ENTER) {
      *d->correlationData = 0xC0FFEE00000000ull | d->correlationId;
    } else {
      s.correlation_data_at_exit = *d->correlationData;
      s.exit_result = *static_cast<const cudaError_t*>(d->functionReturnValue);
    }
  } else if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    const auto* r = static_cast<const CUpti_ResourceData*>(cbdata);
    s.context = r->context;
    s.stream = r->resourceHandle.stream;
  } else if (domain == CUPTI_CB_DOMAIN_SYNCHRONIZE) {
    const auto* y = static_cast<const CUpti_SynchronizeData*>(cbdata);
    s.context = y->context;
    s.stream = y->stream;
  }
  std::lock_guard<std::mutex> lock(g_mu);
  g_seen.push_back(s);
}

class CallbackApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_seen.clear();
    ASSERT_CUPTI_OK(cuptiSubscribe(&subscriber_, Callback, &g_seen));
  }
  void TearDown() override { cuptiFinalize(); }
  CUpti_SubscriberHandle subscriber_ = nullptr;
};

TEST(SubscriptionTest, SecondSubscriberIsRefusedAndToldTheFirstOnesName) {
  CUpti_SubscriberHandle first = nullptr;
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "gsagent";
  ASSERT_CUPTI_OK(cuptiSubscribe_v2(&first, Callback, &g_seen, &params));
  ASSERT_NE(first, nullptr);

  CUpti_SubscriberHandle second = nullptr;
  EXPECT_EQ(cuptiSubscribe(&second, Callback, nullptr), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  char old_name[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = "unchanged";
  CUpti_SubscriberParams second_params{};
  second_params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  second_params.subscriberName = "kineto";
  second_params.oldSubscriberName = old_name;
  second_params.oldSubscriberSize = sizeof(old_name);
  EXPECT_EQ(cuptiSubscribe_v2(&second, Callback, nullptr, &second_params),
            CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  EXPECT_STREQ(old_name, "CUPTI for gsagent");

  // A stale or foreign handle is rejected; after unsubscribing, subscription is free again.
  EXPECT_EQ(cuptiUnsubscribe(nullptr), CUPTI_ERROR_INVALID_PARAMETER);
  ASSERT_CUPTI_OK(cuptiUnsubscribe(first));
  EXPECT_EQ(cuptiUnsubscribe(first), CUPTI_ERROR_INVALID_PARAMETER);
  EXPECT_EQ(cuptiEnableDomain(1, first, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_ERROR_INVALID_PARAMETER);
  ASSERT_CUPTI_OK(cuptiSubscribe(&second, Callback, &g_seen));
  ASSERT_CUPTI_OK(cuptiUnsubscribe(second));
}

TEST(SubscriptionTest, SubscribeV2RejectsUnsetStructSize) {
  CUpti_SubscriberHandle s = nullptr;
  CUpti_SubscriberParams params{};  // structSize 0
  EXPECT_EQ(cuptiSubscribe_v2(&s, Callback, nullptr, &params), CUPTI_ERROR_INVALID_PARAMETER);
}

TEST(NamesTest, VersionResultStringsAndCallbackNamesMatchRealCupti) {
  uint32_t version = 0;
  ASSERT_CUPTI_OK(cuptiGetVersion(&version));
  EXPECT_EQ(version, static_cast<uint32_t>(CUPTI_API_VERSION));
  const char* s = nullptr;
  ASSERT_CUPTI_OK(cuptiGetResultString(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, &s));
  EXPECT_STREQ(s, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
  ASSERT_CUPTI_OK(cuptiGetResultString(CUPTI_ERROR_UNKNOWN, &s));
  EXPECT_STREQ(s, "CUPTI_ERROR_UNKNOWN");
  EXPECT_EQ(cuptiGetResultString(static_cast<CUptiResult>(777), &s), CUPTI_ERROR_INVALID_PARAMETER);
  ASSERT_CUPTI_OK(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API,
                                       CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, &s));
  EXPECT_STREQ(s, "cudaMemcpy_v3020");
  ASSERT_CUPTI_OK(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API,
                                       CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, &s));
  EXPECT_STREQ(s, "__cudaLaunchKernel_v13000");
  ASSERT_CUPTI_OK(cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API,
                                       CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &s));
  EXPECT_STREQ(s, "cuLaunchKernel");
  EXPECT_EQ(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, &s),
            CUPTI_ERROR_INVALID_PARAMETER);
  EXPECT_EQ(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RESOURCE, 1, &s), CUPTI_ERROR_INVALID_PARAMETER);
}

TEST_F(CallbackApiTest, MemcpyEnterAndExitCarryParamsNameAndOneCorrelationId) {
  ASSERT_CUPTI_OK(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API,
                                      CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020));
  uint32_t state = 0;
  ASSERT_CUPTI_OK(cuptiGetCallbackState(&state, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API,
                                        CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020));
  EXPECT_EQ(state, 1u);
  void* device = nullptr;
  ASSERT_CUDA_OK(cudaMalloc(&device, 4096));
  std::vector<char> host(4096, 7);
  ASSERT_CUDA_OK(cudaMemcpy(device, host.data(), 1000, cudaMemcpyHostToDevice));
  ASSERT_CUDA_OK(cudaFree(device));

  std::vector<Seen> seen = SeenSoFar();
  ASSERT_EQ(seen.size(), 2u) << "only the enabled cbid fires (not cudaMalloc/cudaFree)";
  const Seen& enter = seen[0];
  const Seen& exit = seen[1];
  EXPECT_EQ(enter.site, CUPTI_API_ENTER);
  EXPECT_EQ(exit.site, CUPTI_API_EXIT);
  for (const Seen* s : {&enter, &exit}) {
    EXPECT_EQ(s->domain, CUPTI_CB_DOMAIN_RUNTIME_API);
    EXPECT_EQ(s->cbid, static_cast<CUpti_CallbackId>(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020));
    EXPECT_EQ(s->function_name, "cudaMemcpy_v3020");
    EXPECT_EQ(s->memcpy_params.dst, device);
    EXPECT_EQ(s->memcpy_params.src, host.data());
    EXPECT_EQ(s->memcpy_params.count, 1000u);
    EXPECT_EQ(s->memcpy_params.kind, cudaMemcpyHostToDevice);
    EXPECT_NE(s->context, nullptr);
  }
  EXPECT_NE(enter.correlation_id, 0u);
  EXPECT_EQ(enter.correlation_id, exit.correlation_id);
  EXPECT_EQ(enter.context, exit.context);
  EXPECT_EQ(enter.context_uid, exit.context_uid);
  EXPECT_EQ(exit.exit_result, cudaSuccess);
  EXPECT_EQ(exit.correlation_data_at_exit, 0xC0FFEE00000000ull | enter.correlation_id);
}

TEST_F(CallbackApiTest, ContextAndDeviceIdsOfTheCallbackContext) {
  ASSERT_CUPTI_OK(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API,
                                      CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020));
  void* device = nullptr;
  ASSERT_CUDA_OK(cudaMalloc(&device, 4096));
  ASSERT_CUDA_OK(cudaMemset(device, 0, 4096));
  ASSERT_CUDA_OK(cudaDeviceSynchronize());
  std::vector<Seen> seen = SeenSoFar();
  ASSERT_EQ(seen.size(), 2u);
  uint32_t context_id = 0, device_id = 99;
  ASSERT_CUPTI_OK(cuptiGetContextId(seen[0].context, &context_id));
  EXPECT_EQ(context_id, seen[0].context_uid) << "contextUid is the context's CUPTI id";
  ASSERT_CUPTI_OK(cuptiGetDeviceId(seen[0].context, &device_id));
  EXPECT_EQ(device_id, 0u);
  device_id = 99;
  ASSERT_CUPTI_OK(cuptiGetDeviceId(nullptr, &device_id));  // the calling thread's context
  EXPECT_EQ(device_id, 0u);
  EXPECT_EQ(cuptiGetContextId(nullptr, &context_id), CUPTI_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(cuptiGetContextId(reinterpret_cast<CUcontext>(&device_id), &context_id),
            CUPTI_ERROR_INVALID_CONTEXT);
  ASSERT_CUDA_OK(cudaFree(device));
}

TEST_F(CallbackApiTest, DomainSwitchesEveryRuntimeCallbackOnAndOff) {
  ASSERT_CUPTI_OK(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API));
  void* device = nullptr;
  ASSERT_CUDA_OK(cudaMalloc(&device, 256));
  ASSERT_CUDA_OK(cudaFree(device));
  std::vector<Seen> seen = SeenSoFar();
  std::vector<uint32_t> ids;
  int malloc_sites = 0, free_sites = 0;
  for (const Seen& s : seen) {
    if (s.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020) ++malloc_sites;
    if (s.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020) ++free_sites;
    if (s.site == CUPTI_API_ENTER) ids.push_back(s.correlation_id);
    // Every EXIT's correlationData is the value its own ENTER wrote.
    if (s.site == CUPTI_API_EXIT) {
      EXPECT_EQ(s.correlation_data_at_exit, 0xC0FFEE00000000ull | s.correlation_id);
    }
  }
  EXPECT_EQ(malloc_sites, 2);
  EXPECT_EQ(free_sites, 2);
  for (size_t i = 1; i < ids.size(); ++i) EXPECT_NE(ids[i], ids[i - 1]) << "one id per call";

  ASSERT_CUPTI_OK(cuptiEnableDomain(0, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API));
  size_t before = SeenSoFar().size();
  ASSERT_CUDA_OK(cudaMalloc(&device, 256));
  ASSERT_CUDA_OK(cudaFree(device));
  EXPECT_EQ(SeenSoFar().size(), before) << "disabled domain fires nothing";

  // Unsubscribed: nothing fires even for a re-enabled cbid of the old handle.
  ASSERT_CUPTI_OK(cuptiEnableAllDomains(1, subscriber_));
  ASSERT_CUPTI_OK(cuptiUnsubscribe(subscriber_));
  ASSERT_CUDA_OK(cudaMalloc(&device, 256));
  ASSERT_CUDA_OK(cudaFree(device));
  EXPECT_EQ(SeenSoFar().size(), before);
}

TEST_F(CallbackApiTest, LaunchCallbackNamesTheKernel) {
  ASSERT_CUPTI_OK(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API,
                                      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  const void* kernel = simgpuKernel("cupti_named_kernel", 1000);
  ASSERT_CUDA_OK(cudaLaunchKernel(kernel, dim3(2), dim3(32), nullptr, 0, nullptr));
  ASSERT_CUDA_OK(cudaDeviceSynchronize());
  std::vector<Seen> seen = SeenSoFar();
  ASSERT_EQ(seen.size(), 2u);
  for (const Seen& s : seen) {
    EXPECT_EQ(s.function_name, "cudaLaunchKernel_v7000");
    EXPECT_NE(s.symbol_name.find("cupti_named_kernel"), std::string::npos) << s.symbol_name;
  }
}

TEST_F(CallbackApiTest, ResourceAndSynchronizeDomainsReportStreams) {
  ASSERT_CUPTI_OK(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE));
  ASSERT_CUPTI_OK(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_SYNCHRONIZE));
  cudaStream_t stream = nullptr;
  ASSERT_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  ASSERT_CUDA_OK(cudaStreamSynchronize(stream));
  ASSERT_CUDA_OK(cudaDeviceSynchronize());
  ASSERT_CUDA_OK(cudaStreamDestroy(stream));
  int created = 0, stream_synced = 0, context_synced = 0, destroying = 0, context_created = 0;
  for (const Seen& s : SeenSoFar()) {
    if (s.domain == CUPTI_CB_DOMAIN_RESOURCE && s.cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
      ++context_created;
      EXPECT_NE(s.context, nullptr);
    }
    if (s.domain == CUPTI_CB_DOMAIN_RESOURCE && s.cbid == CUPTI_CBID_RESOURCE_STREAM_CREATED) {
      ++created;
      EXPECT_EQ(s.stream, reinterpret_cast<CUstream>(stream));
    }
    if (s.domain == CUPTI_CB_DOMAIN_RESOURCE &&
        s.cbid == CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING) {
      ++destroying;
      EXPECT_EQ(s.stream, reinterpret_cast<CUstream>(stream));
    }
    if (s.domain == CUPTI_CB_DOMAIN_SYNCHRONIZE &&
        s.cbid == CUPTI_CBID_SYNCHRONIZE_STREAM_SYNCHRONIZED) {
      ++stream_synced;
      EXPECT_EQ(s.stream, reinterpret_cast<CUstream>(stream));
    }
    if (s.domain == CUPTI_CB_DOMAIN_SYNCHRONIZE &&
        s.cbid == CUPTI_CBID_SYNCHRONIZE_CONTEXT_SYNCHRONIZED) {
      ++context_synced;
    }
    EXPECT_NE(s.domain, CUPTI_CB_DOMAIN_RUNTIME_API) << "runtime domain was not enabled";
  }
  EXPECT_EQ(context_created, 1);
  EXPECT_EQ(created, 1);
  EXPECT_EQ(destroying, 1);
  EXPECT_EQ(stream_synced, 1);
  EXPECT_EQ(context_synced, 1);
}

void CUPTIAPI FinalizeAtExit(void*, CUpti_CallbackDomain domain, CUpti_CallbackId,
                             const void* cbdata) {
  const auto* d = static_cast<const CUpti_CallbackData*>(cbdata);
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API || d->callbackSite != CUPTI_API_EXIT) return;
  {
    Seen exit_seen;
    exit_seen.domain = domain;
    std::lock_guard<std::mutex> lock(g_mu);
    g_seen.push_back(exit_seen);
  }
  EXPECT_EQ(cuptiFinalize(), CUPTI_SUCCESS);  // as NVIDIA's cupti_finalize sample does
}

TEST(FinalizeTest, DetachFromAnExitCallbackThenAttachAgain) {
  g_seen.clear();
  CUpti_SubscriberHandle s = nullptr;
  ASSERT_CUPTI_OK(cuptiSubscribe(&s, FinalizeAtExit, nullptr));
  ASSERT_CUPTI_OK(cuptiEnableDomain(1, s, CUPTI_CB_DOMAIN_RUNTIME_API));
  int device = 0;
  ASSERT_CUDA_OK(cudaGetDevice(&device));
  ASSERT_CUDA_OK(cudaGetDevice(&device));
  EXPECT_EQ(SeenSoFar().size(), 1u) << "detached: no callbacks after cuptiFinalize";
  EXPECT_EQ(cuptiEnableDomain(1, s, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_ERROR_INVALID_PARAMETER);
  ASSERT_CUPTI_OK(cuptiSubscribe(&s, Callback, &g_seen));
  ASSERT_CUPTI_OK(cuptiEnableCallback(1, s, CUPTI_CB_DOMAIN_RUNTIME_API,
                                      CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
  ASSERT_CUDA_OK(cudaGetDevice(&device));
  EXPECT_EQ(SeenSoFar().size(), 3u) << "attached again: ENTER and EXIT";
  cuptiFinalize();
}

}  // namespace
