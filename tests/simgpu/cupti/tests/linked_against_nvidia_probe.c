/* A CUPTI tool built and linked against NVIDIA's libcudart.so.13 and libcupti.so.13, run with
 * LD_LIBRARY_PATH at simgpu's library folder: the dynamic linker must bind every versioned
 * reference (cuptiSubscribe@libcupti.so.13, cudaMemcpy@libcudart.so.13) to simgpu's libraries,
 * and the tool must see callbacks and records. Plain C, as many tools are. Exit 0 on success. */
#define _GNU_SOURCE /* dladdr */
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_enter, g_exit, g_memcpy_records, g_api_records;
static uint32_t g_callback_correlation;

#define CHECK(cond)                                              \
  do {                                                           \
    if (!(cond)) {                                               \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                   \
    }                                                            \
  } while (0)

static void CUPTIAPI OnCallback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                const void* cbdata) {
  const CUpti_CallbackData* d = (const CUpti_CallbackData*)cbdata;
  (void)userdata;
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API || cbid != CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020) return;
  if (d->callbackSite == CUPTI_API_ENTER) {
    ++g_enter;
  } else {
    ++g_exit;
  }
  g_callback_correlation = d->correlationId;
}

static void CUPTIAPI OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = (uint8_t*)aligned_alloc(8, 1 << 16);
  *size = 1 << 16;
  *max_records = 0;
}

static void CUPTIAPI OnBufferCompleted(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t size,
                                       size_t valid) {
  CUpti_Activity* r = NULL;
  (void)ctx;
  (void)stream;
  (void)size;
  while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
    if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const CUpti_ActivityMemcpy6* m = (const CUpti_ActivityMemcpy6*)r;
      CHECK(m->correlationId == g_callback_correlation);
      CHECK(m->srcKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
      ++g_memcpy_records;
    } else if (r->kind == CUPTI_ACTIVITY_KIND_RUNTIME) {
      ++g_api_records;
    }
  }
  free(buffer);
}

int main(void) {
  Dl_info info;
  CUpti_SubscriberHandle subscriber;
  void* device = NULL;
  char host[4096];
  memset(host, 1, sizeof host);
  /* The binding itself: simgpu's library, found through LD_LIBRARY_PATH. */
  CHECK(dladdr((void*)&cuptiSubscribe, &info) != 0);
  CHECK(strstr(info.dli_fname, "/simgpu/lib/") != NULL);
  CHECK(cuptiSubscribe(&subscriber, OnCallback, NULL) == CUPTI_SUCCESS);
  CHECK(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                            CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020) == CUPTI_SUCCESS);
  CHECK(cuptiActivityRegisterCallbacks(OnBufferRequested, OnBufferCompleted) == CUPTI_SUCCESS);
  CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME) == CUPTI_SUCCESS);
  CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY) == CUPTI_SUCCESS);
  CHECK(cudaMalloc(&device, sizeof host) == cudaSuccess);
  CHECK(cudaMemcpy(device, host, sizeof host, cudaMemcpyHostToDevice) == cudaSuccess);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) == CUPTI_SUCCESS);
  CHECK(g_enter == 1 && g_exit == 1);
  CHECK(g_memcpy_records == 1);
  CHECK(g_api_records >= 3); /* cudaMalloc, cudaMemcpy, cudaDeviceSynchronize */
  CHECK(cuptiFinalize() == CUPTI_SUCCESS);
  printf("ok: NVIDIA-linked tool ran on simgpu's libcupti (%s)\n", info.dli_fname);
  return 0;
}
