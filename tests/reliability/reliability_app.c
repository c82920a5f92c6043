/* reliability_app.c — a CUDA program that ends in every way a training job can, for the
 * reliability tests (tests/reliability/reliability.py runs it with and without the agent).
 *
 *   reliability_app steps N         N steps (H2D copy, kernel, sync), prints a checksum, exits 3
 *   reliability_app abort N         N steps, prints, then abort() (SIGABRT)
 *   reliability_app _exit N         N steps, prints, then _exit(5) (no atexit handlers)
 *   reliability_app spin            steps until killed; prints "ready" after 20 steps
 *   reliability_app sigterm-exits   like spin, with a SIGTERM handler that makes main return 143
 *   reliability_app fork-continue N N steps, forks a child that computes without CUDA and exits,
 *                                   then N more steps in the parent; exits 3
 *   reliability_app threads W T N   W waves of T threads created at once, each its own stream, N
 *                                   steps each, then exit (threads come and go); exits 3
 *   reliability_app flood T SECONDS T threads launch empty kernels as fast as they can (a sync
 *                                   every 1024 launches) for SECONDS; prints launches and rate
 *
 * Prints only deterministic lines on stdout (except `flood`, whose rate line starts with "rate"),
 * so stdout can be compared with and without the agent. Exits 1 on a CUDA error.
 * Every step's calls come from reliability_planted_step, which the traces' stacks must name. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "simgpu.h"
#include "tests/testlib/cuda_check.h"


enum { kBytes = 64 << 10 };

typedef struct Buffers {
  float* pinned;
  float* device;
  cudaStream_t stream;
} Buffers;

static void Alloc(Buffers* b) {
  CHECK(cudaMallocHost((void**)&b->pinned, kBytes));
  CHECK(cudaMalloc((void**)&b->device, kBytes));
  CHECK(cudaStreamCreate(&b->stream));
  for (size_t i = 0; i < kBytes / sizeof(float); ++i) b->pinned[i] = (float)(i % 5);
}

static void Free(Buffers* b) {
  CHECK(cudaStreamDestroy(b->stream));
  CHECK(cudaFree(b->device));
  CHECK(cudaFreeHost(b->pinned));
}

__attribute__((noinline, used)) double reliability_planted_step(Buffers* b, int step) {
  const void* kernel = simgpuKernel("reliability_kernel", 200000); /* 0.2 ms */
  dim3 grid = {1, 1, 1}, block = {32, 1, 1};
  void* args[1] = {&b->device};
  CHECK(cudaMemcpyAsync(b->device, b->pinned, kBytes, cudaMemcpyHostToDevice, b->stream));
  CHECK(cudaLaunchKernel(kernel, grid, block, args, 0, b->stream));
  CHECK(cudaMemcpyAsync(b->pinned, b->device, kBytes, cudaMemcpyDeviceToHost, b->stream));
  CHECK(cudaStreamSynchronize(b->stream));
  return (double)b->pinned[7] + step;
}

static double Steps(Buffers* b, int n) {
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += reliability_planted_step(b, i);
  return sum;
}

static volatile sig_atomic_t g_stop = 0;
static void OnTerm(int sig) {
  (void)sig;
  g_stop = 1;
}

static int Spin(int handle_term) {
  if (handle_term) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = OnTerm;
    sigaction(SIGTERM, &sa, NULL);
  }
  Buffers b;
  Alloc(&b);
  for (long step = 0; !g_stop; ++step) {
    reliability_planted_step(&b, (int)step);
    if (step == 20) {
      printf("ready\n");
      fflush(stdout);
    }
  }
  Free(&b);
  printf("terminated\n");
  return 143;
}

static int ForkContinue(int n) {
  Buffers b;
  Alloc(&b);
  double sum = Steps(&b, n);
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    /* No CUDA in the child (CUDA does not survive fork); it works a little and exits normally,
     * running the atexit handlers it inherited. */
    double x = 0;
    for (int i = 1; i < 2000000; ++i) x += 1.0 / i;
    printf("child: %.3f\n", x);
    exit(0);
  }
  sum += Steps(&b, n);
  int status = 0;
  waitpid(child, &status, 0);
  Free(&b);
  printf("fork-continue: child status %d, checksum %.1f\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1,
         sum);
  return 3;
}

typedef struct WorkerArg {
  int steps;
} WorkerArg;

static void* Worker(void* p) {
  const WorkerArg* arg = (const WorkerArg*)p;
  Buffers b;
  Alloc(&b);
  Steps(&b, arg->steps);
  Free(&b);
  return NULL;
}

static int Threads(int waves, int threads, int steps) {
  pthread_t* t = calloc((size_t)threads, sizeof(pthread_t));
  WorkerArg arg = {steps};
  for (int w = 0; w < waves; ++w) {
    for (int i = 0; i < threads; ++i) pthread_create(&t[i], NULL, Worker, &arg);
    for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
  }
  free(t);
  printf("threads: %d waves x %d threads x %d steps\n", waves, threads, steps);
  return 3;
}

/* ---- flood ---- */

static double g_flood_seconds;
static uint64_t NowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void* FloodWorker(void* p) {
  uint64_t* launches = (uint64_t*)p;
  const void* kernel = simgpuKernel("flood_kernel", 0);
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  dim3 grid = {1, 1, 1}, block = {1, 1, 1};
  const uint64_t end = NowNs() + (uint64_t)(g_flood_seconds * 1e9);
  uint64_t n = 0;
  while (NowNs() < end) {
    for (int i = 0; i < 1024; ++i) CHECK(cudaLaunchKernel(kernel, grid, block, NULL, 0, s));
    n += 1024;
    CHECK(cudaStreamSynchronize(s));
  }
  CHECK(cudaStreamDestroy(s));
  *launches = n;
  return NULL;
}

static int Flood(int threads, double seconds) {
  g_flood_seconds = seconds;
  CHECK(cudaFree(NULL)); /* initialise before timing */
  pthread_t* t = calloc((size_t)threads, sizeof(pthread_t));
  uint64_t* launches = calloc((size_t)threads, sizeof(uint64_t));
  const uint64_t start = NowNs();
  for (int i = 0; i < threads; ++i) pthread_create(&t[i], NULL, FloodWorker, &launches[i]);
  uint64_t total = 0;
  for (int i = 0; i < threads; ++i) {
    pthread_join(t[i], NULL);
    total += launches[i];
  }
  const double elapsed = (double)(NowNs() - start) / 1e9;
  printf("launches %llu\nrate %.0f launches/s over %.2f s\n", (unsigned long long)total,
         (double)total / elapsed, elapsed);
  free(t);
  free(launches);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: reliability_app MODE [ARGS]\n");
    return 2;
  }
  const char* mode = argv[1];
  const int n = argc > 2 ? atoi(argv[2]) : 10;
  if (strcmp(mode, "steps") == 0 || strcmp(mode, "abort") == 0 || strcmp(mode, "_exit") == 0) {
    Buffers b;
    Alloc(&b);
    const double sum = Steps(&b, n);
    printf("%s: %d steps, checksum %.1f\n", mode, n, sum);
    fflush(stdout);
    if (mode[0] == 'a') abort();
    if (mode[0] == '_') _exit(5);
    Free(&b);
    return 3;
  }
  if (strcmp(mode, "spin") == 0) return Spin(0);
  if (strcmp(mode, "sigterm-exits") == 0) return Spin(1);
  if (strcmp(mode, "fork-continue") == 0) return ForkContinue(n);
  if (strcmp(mode, "threads") == 0 && argc == 5) return Threads(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
  if (strcmp(mode, "flood") == 0 && argc == 4) return Flood(atoi(argv[2]), atof(argv[3]));
  fprintf(stderr, "reliability_app: unknown mode %s\n", mode);
  return 2;
}
