// cupti_alone.c — a CUPTI client that asks of CUPTI what the agent asks and does nothing else:
// the agent's activity kinds (agent/cupti/cupti_session.cc, kActivityKinds), an empty callback on
// the whole runtime and driver domains, 2 MiB buffers whose records are walked and dropped.
// LD_PRELOADed by run_launch_cost_bench, it is the row that says what CUPTI itself (simgpu's
// stand-in there) costs a loop, so that the agent's own share is the difference.
#include <cupti.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static volatile uint64_t g_records;
static volatile uint64_t g_callbacks;

static void CUPTIAPI Requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 2u << 20;
  *buffer = aligned_alloc(8, *size);
  *max_records = 0;
}

static void CUPTIAPI Completed(CUcontext context, uint32_t stream, uint8_t* buffer, size_t size,
                               size_t valid) {
  (void)context;
  (void)stream;
  (void)size;
  CUpti_Activity* record = NULL;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) g_records++;
  free(buffer);
}

static void CUPTIAPI Callback(void* user, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                              const void* data) {
  (void)user;
  (void)domain;
  (void)id;
  (void)data;
  g_callbacks++;
}

__attribute__((constructor)) static void Start(void) {
  CUpti_SubscriberHandle subscriber;
  if (cuptiSubscribe(&subscriber, Callback, NULL) != CUPTI_SUCCESS) {
    fprintf(stderr, "cupti_alone: cuptiSubscribe failed\n");
    return;
  }
  cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
  cuptiActivityRegisterCallbacks(Requested, Completed);
  const CUpti_ActivityKind kinds[] = {
      CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
      CUPTI_ACTIVITY_KIND_MEMCPY2,           CUPTI_ACTIVITY_KIND_MEMSET,
      CUPTI_ACTIVITY_KIND_MEMORY2,           CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
      CUPTI_ACTIVITY_KIND_OVERHEAD};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) cuptiActivityEnable(kinds[i]);
}

__attribute__((destructor)) static void Stop(void) { cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); }
