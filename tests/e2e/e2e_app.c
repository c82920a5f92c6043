/* e2e_app.c — a small CUDA program for the end-to-end tests, one lifecycle edge per mode.
 *
 *   e2e_app basic            pinned/pageable copies, a memset and a kernel per step, 4 steps
 *   e2e_app threads          8 threads issue steps at once, each on its own stream
 *   e2e_app fork-before      forks before touching CUDA: the child uses CUDA, a second child
 *                            does not; then the parent uses CUDA
 *   e2e_app fork-after       uses CUDA, then forks a child that does not use CUDA
 *   e2e_app exec             uses CUDA, then execs itself in mode `basic`
 *   e2e_app ptsz             the per-thread-default-stream entry points (_ptsz/_ptds)
 *   e2e_app graph            a step of 3 kernels captured as a CUDA graph, replayed 4 times
 *
 * Runs on simgpu (kernels from simgpuKernel). Prints only deterministic lines, so the tests can
 * compare stdout with and without the agent; exits 3 on purpose (a non-zero status the agent
 * must pass through unchanged) and 1 on a CUDA error.
 * The planted function e2e_planted_step must appear in the stacks the agent records. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "simgpu.h"
#include "tests/testlib/cuda_check.h"


enum { kBytes = 1 << 20, kSteps = 4, kThreads = 8 };

typedef struct Buffers {
  float* pinned;
  float* pageable;
  float* device;
  cudaStream_t stream;
} Buffers;

static void Alloc(Buffers* b) {
  CHECK(cudaHostAlloc((void**)&b->pinned, kBytes, 0));
  b->pageable = (float*)malloc(kBytes);
  CHECK(cudaMalloc((void**)&b->device, kBytes));
  CHECK(cudaStreamCreate(&b->stream));
  for (size_t i = 0; i < kBytes / sizeof(float); ++i) b->pinned[i] = (float)(i % 7);
}

static void Free(Buffers* b) {
  CHECK(cudaStreamDestroy(b->stream));
  CHECK(cudaFree(b->device));
  CHECK(cudaFreeHost(b->pinned));
  free(b->pageable);
}

/* The planted function: its name must be in the stack of every call it makes. */
__attribute__((noinline, used)) double e2e_planted_step(Buffers* b, int step) {
  const void* kernel = simgpuKernel("e2e_kernel", 2000000); /* 2 ms */
  dim3 grid = {1, 1, 1}, block = {32, 1, 1};
  void* args[1] = {&b->device};
  CHECK(cudaMemcpyAsync(b->device, b->pinned, kBytes, cudaMemcpyHostToDevice, b->stream));
  CHECK(cudaLaunchKernel(kernel, grid, block, args, 0, b->stream));
  CHECK(cudaMemsetAsync(b->device, 0, kBytes / 2, b->stream));
  CHECK(cudaStreamSynchronize(b->stream));
  CHECK(cudaMemcpy(b->pageable, b->device, kBytes, cudaMemcpyDeviceToHost));
  return (double)b->pageable[kBytes / sizeof(float) - 1] + step;
}

static int Basic(void) {
  Buffers b;
  CHECK(cudaSetDevice(0));
  Alloc(&b);
  double sum = 0;
  for (int step = 0; step < kSteps; ++step) sum += e2e_planted_step(&b, step);
  CHECK(cudaDeviceSynchronize());
  Free(&b);
  printf("basic: %d steps, checksum %.1f\n", kSteps, sum);
  return 3;
}

static void* Worker(void* arg) {
  (void)arg;
  Buffers b;
  CHECK(cudaSetDevice(0));
  Alloc(&b);
  for (int step = 0; step < kSteps; ++step) e2e_planted_step(&b, step);
  CHECK(cudaStreamSynchronize(b.stream));
  Free(&b);
  return NULL;
}

static int Threads(void) {
  pthread_t t[kThreads];
  for (int i = 0; i < kThreads; ++i) pthread_create(&t[i], NULL, Worker, NULL);
  for (int i = 0; i < kThreads; ++i) pthread_join(t[i], NULL);
  printf("threads: %d threads x %d steps\n", kThreads, kSteps);
  return 3;
}

static int WaitChild(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static int ForkBefore(void) {
  fflush(stdout);
  pid_t cuda_child = fork();
  if (cuda_child == 0) exit(Basic() == 3 ? 0 : 1); /* exit: atexit flushes the trace */
  const int cuda_status = WaitChild(cuda_child);
  fflush(stdout);
  pid_t plain_child = fork();
  if (plain_child == 0) {
    printf("plain child: no CUDA\n");
    fflush(stdout);
    _exit(0);
  }
  const int plain_status = WaitChild(plain_child);
  printf("children: cuda=%d plain=%d cuda_pid=%d plain_pid=%d\n", cuda_status, plain_status,
         (int)cuda_child, (int)plain_child);
  return Basic();
}

static int ForkAfter(void) {
  const int status = Basic();
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    printf("child after CUDA: no CUDA\n");
    fflush(stdout);
    exit(0); /* exit, not _exit: atexit handlers run in the child too */
  }
  printf("child: %d pid=%d\n", WaitChild(child), (int)child);
  return status;
}

static int Exec(const char* self) {
  Basic();
  fflush(stdout);
  /* The next image may write its trace elsewhere (the tests keep the two images' files apart:
   * with the default pattern both would have this pid in their name). */
  const char* after = getenv("E2E_GS_OUTPUT_AFTER_EXEC");
  if (after != NULL) setenv("GS_OUTPUT", after, 1);
  char* const argv[] = {(char*)self, (char*)"basic", NULL};
  execv(self, argv);
  perror("execv");
  return 1;
}

/* Per-thread default stream entry points, called by name (what --default-stream per-thread
 * compiles to). */
cudaError_t cudaMemcpyAsync_ptsz(void*, const void*, size_t, enum cudaMemcpyKind, cudaStream_t);
cudaError_t cudaLaunchKernel_ptsz(const void*, dim3, dim3, void**, size_t, cudaStream_t);
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t);
cudaError_t cudaMemcpy_ptds(void*, const void*, size_t, enum cudaMemcpyKind);

__attribute__((noinline, used)) static int e2e_planted_ptsz(void) {
  Buffers b;
  Alloc(&b);
  const void* kernel = simgpuKernel("e2e_ptsz_kernel", 1000000);
  dim3 grid = {1, 1, 1}, block = {32, 1, 1};
  void* args[1] = {&b.device};
  CHECK(cudaMemcpyAsync_ptsz(b.device, b.pinned, kBytes, cudaMemcpyHostToDevice, 0));
  CHECK(cudaLaunchKernel_ptsz(kernel, grid, block, args, 0, 0));
  CHECK(cudaStreamSynchronize_ptsz(0));
  CHECK(cudaMemcpy_ptds(b.pageable, b.device, kBytes, cudaMemcpyDeviceToHost));
  Free(&b);
  printf("ptsz: ok\n");
  return 3;
}

/* Capture (kGraphNodes kernels and a memset), instantiate, replay kGraphReplays times. A tool that
 * adds work to the capturing stream (an event record) would change the graph or fail the capture:
 * the CHECKs would say so. */
enum { kGraphNodes = 3, kGraphReplays = 4 };
__attribute__((noinline, used)) static int e2e_planted_graph(void) {
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  dim3 grid = {1, 1, 1}, block = {32, 1, 1};
  const void* kernel = simgpuKernel("e2e_graph_node", 200000);
  void* scratch = NULL;
  CHECK(cudaMalloc(&scratch, 1 << 20));
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < kGraphNodes; ++i) CHECK(cudaLaunchKernel(kernel, grid, block, NULL, 0, stream));
  CHECK(cudaMemsetAsync(scratch, 0, 1 << 20, stream));
  cudaGraph_t graph;
  CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < kGraphReplays; ++i) CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaFree(scratch));
  CHECK(cudaStreamDestroy(stream));
  printf("graph: ok\n");
  return 3;
}

/* A CUDA 12 application that loads a CUDA 13 plugin RTLD_LOCAL (e2e_plugin.c, built as
 * libgs_e2e_plugin13.so): its own steps, the plugin's, and the same last-error check on its own
 * runtime, which must have seen its own failed allocation. */
__attribute__((noinline)) static int Plugin(const char* path) {
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    return 1;
  }
  double (*plugin_steps)(int) = (double (*)(int))dlsym(handle, "e2e_plugin_steps");
  if (plugin_steps == NULL) return 1;
  Buffers b;
  CHECK(cudaSetDevice(0));
  Alloc(&b);
  double sum = 0;
  for (int step = 0; step < 2; ++step) sum += e2e_planted_step(&b, step);
  const double plugin = plugin_steps(3);
  void* huge = NULL;
  const cudaError_t failed = cudaMalloc(&huge, (size_t)1 << 60);
  const cudaError_t last = cudaGetLastError();
  Free(&b);
  printf("plugin: app checksum %.1f, plugin checksum %.1f, app's runtime saw its calls: %s\n", sum, plugin,
         failed != cudaSuccess && last == failed ? "yes" : "no");
  return 3;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "basic";
  if (strcmp(mode, "basic") == 0) return Basic();
  if (strcmp(mode, "threads") == 0) return Threads();
  if (strcmp(mode, "fork-before") == 0) return ForkBefore();
  if (strcmp(mode, "fork-after") == 0) return ForkAfter();
  if (strcmp(mode, "exec") == 0) return Exec(argv[0]);
  if (strcmp(mode, "ptsz") == 0) return e2e_planted_ptsz();
  if (strcmp(mode, "graph") == 0) return e2e_planted_graph();
  if (strcmp(mode, "plugin") == 0 && argc > 2) return Plugin(argv[2]);
  fprintf(stderr, "unknown mode %s\n", mode);
  return 2;
}
