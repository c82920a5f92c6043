// driver_cupti_test.cc — a tiny CUPTI tool on simgpu's libcupti.so.13 watching both API layers:
// RUNTIME and DRIVER activity plus callbacks in both domains, while the program launches through
// the runtime (cudaLaunchKernel, cudaMemcpyAsync) and through the driver (cuLaunchKernel,
// cuLaunchKernelEx, cuGetProcAddress) on a real cubin. It checks the correlation model of
// tests/simgpu/CUPTI_CORRELATION.md:
//   - a runtime call's nested driver call has the runtime call's correlation id (callbacks and
//     records), is entered after and left before it, and the kernel/memcpy record carries it;
//   - a direct driver call has a correlation id of its own, carried by its kernel record;
//   - driver callbacks carry the real cbid, functionName, params struct and symbolName.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "activity_collector.h"
#include "simgpu.h"

namespace {

struct Seen {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
  CUpti_ApiCallbackSite site;
  std::string function_name;
  std::string symbol_name;
  uint32_t correlation_id;
  CUfunction launched = nullptr;  // cuLaunchKernel(Ex) params
};

std::mutex g_mu;
std::vector<Seen> g_seen;

void CUPTIAPI Callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                       const void* cbdata) {
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* d = static_cast<const CUpti_CallbackData*>(cbdata);
  Seen s{domain, cbid, d->callbackSite, d->functionName ? d->functionName : "",
         d->symbolName ? d->symbolName : "", d->correlationId};
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) {
    s.launched = static_cast<const cuLaunchKernel_params*>(d->functionParams)->f;
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx) {
    s.launched = static_cast<const cuLaunchKernelEx_params*>(d->functionParams)->f;
  }
  std::lock_guard<std::mutex> lock(g_mu);
  g_seen.push_back(s);
}

std::vector<char> ReadCubin() {
  std::ifstream in(DRIVER_CUBIN, std::ios::binary);
  return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<CUpti_ActivityAPI> DriverRecords(uint32_t cbid) {
  std::vector<CUpti_ActivityAPI> out;
  for (const auto& r : cupti_test::RecordsOfKind<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_DRIVER)) {
    if (r.cbid == cbid) out.push_back(r);
  }
  return out;
}

TEST(SimgpuDriverCupti, RuntimeNestsDriverCallsAndDriverLaunchesCorrelateThemselves) {
  cupti_test::StartCollecting();
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER));
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  ASSERT_CUPTI_OK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
  CUpti_SubscriberHandle subscriber;
  ASSERT_CUPTI_OK(cuptiSubscribe(&subscriber, Callback, nullptr));
  ASSERT_CUPTI_OK(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API));
  ASSERT_CUPTI_OK(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API));

  // Runtime: a launch and a copy (the runtime initialises the driver and its context).
  const void* rt_kernel = simgpuKernel("runtime_kernel", 200000);
  ASSERT_CUDA_OK(cudaLaunchKernel(rt_kernel, dim3(1), dim3(32), nullptr, 0, nullptr));
  void* dev = nullptr;
  ASSERT_CUDA_OK(cudaMalloc(&dev, 4096));
  std::vector<char> host(4096, 1);
  ASSERT_CUDA_OK(cudaMemcpyAsync(dev, host.data(), host.size(), cudaMemcpyHostToDevice, nullptr));
  ASSERT_CUDA_OK(cudaDeviceSynchronize());

  // Driver: the primary context is current (the runtime made it so); a library's launch.
  CUcontext ctx = nullptr;
  ASSERT_EQ(cuCtxGetCurrent(&ctx), CUDA_SUCCESS);
  ASSERT_NE(ctx, nullptr);
  void* launch_fn = nullptr;
  CUdriverProcAddressQueryResult status;
  ASSERT_EQ(cuGetProcAddress("cuLaunchKernel", &launch_fn, CUDA_VERSION, 0, &status), CUDA_SUCCESS);
  std::vector<char> cubin = ReadCubin();
  ASSERT_FALSE(cubin.empty());
  CUmodule module;
  ASSERT_EQ(cuModuleLoadData(&module, cubin.data()), CUDA_SUCCESS);
  CUfunction add, scale;
  ASSERT_EQ(cuModuleGetFunction(&add, module, "triton_add"), CUDA_SUCCESS);
  ASSERT_EQ(cuModuleGetFunction(&scale, module, "_Z5scalePffi"), CUDA_SUCCESS);
  CUdeviceptr p = reinterpret_cast<CUdeviceptr>(dev);
  int n = 1024;
  float a = 2.0f;
  void* add_args[] = {&p, &p, &p, &n};
  using LaunchFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                unsigned, unsigned, CUstream, void**, void**);
  ASSERT_EQ(reinterpret_cast<LaunchFn>(launch_fn)(add, 4, 1, 1, 256, 1, 1, 0, nullptr, add_args,
                                                  nullptr),
            CUDA_SUCCESS);
  void* scale_args[] = {&p, &a, &n};
  CUlaunchConfig config = {};
  config.gridDimX = 8;
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = 128;
  config.blockDimY = config.blockDimZ = 1;
  ASSERT_EQ(cuLaunchKernelEx(&config, scale, scale_args, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  ASSERT_CUPTI_OK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));

  auto kernels = cupti_test::RecordsOfKind<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  std::map<std::string, CUpti_ActivityKernel10> by_name;
  for (const auto& k : kernels) by_name[k.name] = k;
  ASSERT_EQ(by_name.size(), 3u);

  // 1. Runtime launch: RUNTIME record R, nested DRIVER cuLaunchKernel record D, kernel K share
  //    one id; D lies within R.
  auto rt_launches = cupti_test::RuntimeRecords(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  ASSERT_EQ(rt_launches.size(), 1u);
  const CUpti_ActivityAPI& r = rt_launches[0];
  EXPECT_EQ(by_name.at("runtime_kernel").correlationId, r.correlationId);
  auto drv_launches = DriverRecords(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
  ASSERT_EQ(drv_launches.size(), 2u);  // the runtime's nested one, and the library's
  const CUpti_ActivityAPI* nested = nullptr;
  const CUpti_ActivityAPI* direct = nullptr;
  for (const auto& d : drv_launches) (d.correlationId == r.correlationId ? nested : direct) = &d;
  ASSERT_TRUE(nested && direct);
  EXPECT_GE(nested->start, r.start);
  EXPECT_LE(nested->end, r.end);
  EXPECT_EQ(nested->threadId, r.threadId);
  // The copy: cudaMemcpyAsync's nested cuMemcpyAsync and the MEMCPY record share its id.
  auto rt_copies = cupti_test::RuntimeRecords(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020);
  ASSERT_EQ(rt_copies.size(), 1u);
  auto drv_copies = DriverRecords(CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync);
  ASSERT_EQ(drv_copies.size(), 1u);
  EXPECT_EQ(drv_copies[0].correlationId, rt_copies[0].correlationId);
  auto memcpys = cupti_test::RecordsOfKind<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  ASSERT_EQ(memcpys.size(), 1u);
  EXPECT_EQ(memcpys[0].correlationId, rt_copies[0].correlationId);
  EXPECT_EQ(DriverRecords(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2).at(0).correlationId,
            cupti_test::RuntimeRecords(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020).at(0).correlationId);

  // 2. Direct driver launches: ids of their own, which their kernels carry; no runtime record
  //    has them.
  std::set<uint32_t> runtime_ids;
  for (const auto& rec : cupti_test::RecordsOfKind<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME)) {
    runtime_ids.insert(rec.correlationId);
  }
  EXPECT_EQ(by_name.at("triton_add").correlationId, direct->correlationId);
  EXPECT_EQ(runtime_ids.count(direct->correlationId), 0u);
  auto ex = DriverRecords(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx);
  ASSERT_EQ(ex.size(), 1u);
  EXPECT_EQ(by_name.at("_Z5scalePffi").correlationId, ex[0].correlationId);
  EXPECT_NE(ex[0].correlationId, direct->correlationId);
  EXPECT_EQ(runtime_ids.count(ex[0].correlationId), 0u);
  auto gpa = DriverRecords(CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2);
  ASSERT_EQ(gpa.size(), 1u);
  EXPECT_EQ(runtime_ids.count(gpa[0].correlationId), 0u);
  // Every direct driver record's id is unique.
  std::map<uint32_t, int> direct_ids;
  for (const auto& rec : cupti_test::RecordsOfKind<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_DRIVER)) {
    if (runtime_ids.count(rec.correlationId) == 0) ++direct_ids[rec.correlationId];
  }
  for (const auto& [id, count] : direct_ids) EXPECT_EQ(count, 1) << "correlation id " << id;

  // 3. Callbacks: ENTER runtime, ENTER driver, EXIT driver, EXIT runtime, one id; the driver
  //    callbacks name the function and kernel and pass cuLaunchKernel_params.
  std::vector<Seen> seen;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    seen = g_seen;
  }
  std::vector<Seen> of_launch;
  for (const auto& s : seen) {
    if (s.correlation_id == r.correlationId) of_launch.push_back(s);
  }
  ASSERT_EQ(of_launch.size(), 4u);
  EXPECT_EQ(of_launch[0].domain, CUPTI_CB_DOMAIN_RUNTIME_API);
  EXPECT_EQ(of_launch[0].site, CUPTI_API_ENTER);
  EXPECT_EQ(of_launch[1].domain, CUPTI_CB_DOMAIN_DRIVER_API);
  EXPECT_EQ(of_launch[1].site, CUPTI_API_ENTER);
  EXPECT_EQ(of_launch[1].cbid, static_cast<CUpti_CallbackId>(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  EXPECT_EQ(of_launch[1].function_name, "cuLaunchKernel");
  EXPECT_EQ(of_launch[1].symbol_name, "runtime_kernel");
  EXPECT_EQ(of_launch[2].domain, CUPTI_CB_DOMAIN_DRIVER_API);
  EXPECT_EQ(of_launch[2].site, CUPTI_API_EXIT);
  EXPECT_EQ(of_launch[3].domain, CUPTI_CB_DOMAIN_RUNTIME_API);
  EXPECT_EQ(of_launch[3].site, CUPTI_API_EXIT);
  int direct_enters = 0;
  for (const auto& s : seen) {
    if (s.correlation_id != direct->correlationId) continue;
    EXPECT_EQ(s.domain, CUPTI_CB_DOMAIN_DRIVER_API);
    EXPECT_EQ(s.symbol_name, "triton_add");
    EXPECT_EQ(s.launched, add);
    direct_enters += s.site == CUPTI_API_ENTER;
  }
  EXPECT_EQ(direct_enters, 1);
  const char* name = nullptr;
  ASSERT_CUPTI_OK(cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API,
                                       CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &name));
  EXPECT_STREQ(name, "cuLaunchKernelEx");
  ASSERT_CUPTI_OK(cuptiUnsubscribe(subscriber));
}

}  // namespace
