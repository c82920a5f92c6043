// sampler_phases.cc — a C++ program that blocks in every way the sampler classifies, one phase at a
// time on its main thread (the thread that makes the CUDA calls, so the one sampled), while helper
// threads feed it slowly. Run with and without libgsagent.so by sampler_e2e.py.
//
// Every system call's result is checked. EINTR is never retried here: a signal that interrupted a
// call of this thread (nanosleep, poll, epoll_wait, sem_timedwait are not restarted even under
// SA_RESTART) makes the program print "UNEXPECTED EINTR in <call>" and exit 3. Output, on stdout:
//   TID <main thread id>
//   PHASE <name> <start_ns> <end_ns>        CLOCK_MONOTONIC, the trace's clock
//   RESULT <name> <value>                   must be identical with and without the agent
#include <cuda_runtime_api.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

namespace {

constexpr int kChunks = 16;           // per feeding phase
constexpr int kChunkBytes = 4096;
constexpr int kFeedPeriodMs = 25;     // => ~400 ms per phase
constexpr int kSleeps = 40;           // x 10 ms
constexpr int kReadbacks = 60;        // x ~6 ms of bookkeeping

uint64_t Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

[[noreturn]] void Die(const char* what) {
  if (errno == EINTR) {
    std::printf("UNEXPECTED EINTR in %s\n", what);
    std::fflush(stdout);
    std::_Exit(3);
  }
  std::printf("FAILED %s: %s\n", what, std::strerror(errno));
  std::fflush(stdout);
  std::_Exit(2);
}

void SleepMs(int ms) {  // helpers' pacing; their EINTR would be ours too, so checked the same way
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  if (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, nullptr) != 0) {
    errno = EINTR;
    Die("helper clock_nanosleep");
  }
}

struct Phase {
  const char* name;
  uint64_t start;
  explicit Phase(const char* n) : name(n), start(Now()) {}
  ~Phase() {
    std::printf("PHASE %s %llu %llu\n", name, static_cast<unsigned long long>(start),
                static_cast<unsigned long long>(Now()));
  }
};

// A helper thread writing kChunks chunks of a known pattern into `fd`, one every period.
std::thread Feeder(int fd) {
  return std::thread([fd] {
    char chunk[kChunkBytes];
    for (int i = 0; i < kChunks; ++i) {
      SleepMs(kFeedPeriodMs);
      for (int j = 0; j < kChunkBytes; ++j) chunk[j] = static_cast<char>((i * 131 + j * 7) & 0xff);
      for (int off = 0; off < kChunkBytes;) {
        const ssize_t n = write(fd, chunk + off, kChunkBytes - off);
        if (n < 0) Die("helper write");
        off += static_cast<int>(n);
      }
    }
  });
}

uint64_t Checksum(uint64_t sum, const char* data, ssize_t n) {
  for (ssize_t i = 0; i < n; ++i) sum = sum * 1099511628211ull ^ static_cast<unsigned char>(data[i]);
  return sum;
}

// Reads kChunks * kChunkBytes from `fd`, waiting first with `wait` (none, poll, epoll).
// noinline, like every function below that blocks: the test looks for it in blocked samples.
enum class Wait { kNone, kPoll, kEpoll };
__attribute__((noinline)) uint64_t ReadAll(int fd, Wait wait, bool use_recv) {
  int epfd = -1;
  if (wait == Wait::kEpoll) {
    epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0) Die("epoll_create1");
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0) Die("epoll_ctl");
  }
  uint64_t sum = 1469598103934665603ull;
  char buffer[kChunkBytes];
  for (int got = 0; got < kChunks * kChunkBytes;) {
    if (wait == Wait::kPoll) {
      pollfd p{fd, POLLIN, 0};
      const int r = poll(&p, 1, 5000);
      if (r < 0) Die("poll");
      if (r == 0) {
        errno = ETIMEDOUT;
        Die("poll (timeout)");
      }
    } else if (wait == Wait::kEpoll) {
      epoll_event ev;
      const int r = epoll_wait(epfd, &ev, 1, 5000);
      if (r < 0) Die("epoll_wait");
      if (r == 0) {
        errno = ETIMEDOUT;
        Die("epoll_wait (timeout)");
      }
    }
    const ssize_t n = use_recv ? recv(fd, buffer, sizeof buffer, 0) : read(fd, buffer, sizeof buffer);
    if (n < 0) Die(use_recv ? "recv" : "read");
    if (n == 0) {
      errno = EPIPE;
      Die("read (early end of data)");
    }
    sum = Checksum(sum, buffer, n);
    got += static_cast<int>(n);
  }
  if (epfd >= 0) close(epfd);
  return sum;
}

__attribute__((noinline)) uint64_t BusySpin(uint64_t until_ns) {
  uint64_t x = 88172645463325252ull, rounds = 0;
  while (Now() < until_ns) {
    for (int i = 0; i < 10000; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
    }
    ++rounds;
  }
  asm volatile("" : : "r"(x) : "memory");
  return rounds;
}

void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::printf("FAILED %s: cuda error %d\n", what, static_cast<int>(e));
    std::exit(2);
  }
}

// One sleep of `ms`, alternating the raw nanosleep system call and clock_nanosleep.
__attribute__((noinline)) void SleepOnce(int i, long ms) {
  timespec ts{0, ms * 1000000L};
  if (i % 2 == 0) {
    if (syscall(SYS_nanosleep, &ts, nullptr) != 0) Die("nanosleep");
  } else {
    const int r = clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, nullptr);
    if (r != 0) {
      errno = r;
      Die("clock_nanosleep");
    }
  }
  asm volatile("" ::: "memory");  // no tail call: this frame stays on the stack while it sleeps
}

// The host's bookkeeping after reading a scalar back from the device: it sleeps ~6 ms (a
// stand-in for a log write or a rate limiter), through the C++ library.
__attribute__((noinline)) void Bookkeeping() {
  std::this_thread::sleep_for(std::chrono::microseconds(6000));
  asm volatile("" ::: "memory");
}

// Waits on the condition variable for the producer's next item.
__attribute__((noinline)) void WaitForWork(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                                           const int& produced, int consumed) {
  cv.wait(lock, [&] { return produced > consumed; });
  asm volatile("" ::: "memory");
}

// sem_timedwait with a 5 s deadline.
__attribute__((noinline)) void TakeWithTimeout(sem_t* sem) {
  timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 5;
  if (sem_timedwait(sem, &deadline) != 0) Die("sem_timedwait");
  asm volatile("" ::: "memory");
}

}  // namespace

int main() {
  // CUDA first: the agent activates lazily on the first call and samples the threads that issue
  // CUDA work (this one).
  void* device = nullptr;
  Check(cudaMalloc(&device, 1 << 20), "cudaMalloc");
  Check(cudaMemset(device, 0, 1 << 20), "cudaMemset");
  Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  std::printf("TID %ld\n", static_cast<long>(syscall(SYS_gettid)));

  {
    Phase p("busy");
    BusySpin(Now() + 400000000ull);
  }
  std::printf("RESULT busy done\n");

  {
    Phase p("sleep");
    for (int i = 0; i < kSleeps; ++i) SleepOnce(i, 10);
  }
  std::printf("RESULT sleeps %d\n", kSleeps);

  {  // a step that reads a scalar back, then sleeps in host bookkeeping
    float* scalar = nullptr;
    Check(cudaMalloc(reinterpret_cast<void**>(&scalar), sizeof(float)), "cudaMalloc scalar");
    Check(cudaMemset(scalar, 0, sizeof(float)), "cudaMemset scalar");
    float loss = 1.0f;
    {
      Phase p("readback_sleep");
      for (int i = 0; i < kReadbacks; ++i) {
        Check(cudaMemcpy(&loss, scalar, sizeof loss, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
        Bookkeeping();
      }
    }
    Check(cudaFree(scalar), "cudaFree scalar");
    std::printf("RESULT readback_sleep %d %g\n", kReadbacks, static_cast<double>(loss));
  }

  const struct {
    const char* name;
    bool socket;
    Wait wait;
  } reads[] = {{"pipe_read", false, Wait::kNone},    {"pipe_poll", false, Wait::kPoll},
               {"socket_recv", true, Wait::kNone},   {"socket_epoll", true, Wait::kEpoll}};
  for (const auto& r : reads) {
    int fds[2];
    if (r.socket ? socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0 : pipe2(fds, O_CLOEXEC) != 0)
      Die("pipe/socketpair");
    std::thread feeder = Feeder(fds[1]);
    uint64_t sum;
    {
      Phase p(r.name);
      sum = ReadAll(fds[0], r.wait, r.socket);
    }
    feeder.join();
    close(fds[0]);
    close(fds[1]);
    std::printf("RESULT %s %llx\n", r.name, static_cast<unsigned long long>(sum));
  }

  {  // condition variable: wait() on a futex without a timeout (restarted by SA_RESTART)
    std::mutex mu;
    std::condition_variable cv;
    int produced = 0, consumed = 0;
    std::thread producer([&] {
      for (int i = 0; i < kChunks; ++i) {
        SleepMs(kFeedPeriodMs);
        std::lock_guard<std::mutex> lock(mu);
        ++produced;
        cv.notify_one();
      }
    });
    {
      Phase p("condvar");
      std::unique_lock<std::mutex> lock(mu);
      while (consumed < kChunks) {
        WaitForWork(lock, cv, produced, consumed);
        ++consumed;
      }
    }
    producer.join();
    std::printf("RESULT condvar %d\n", consumed);
  }

  {  // semaphore with a timeout: a futex wait that is NOT restarted (EINTR would show)
    sem_t sem;
    if (sem_init(&sem, 0, 0) != 0) Die("sem_init");
    std::thread producer([&] {
      for (int i = 0; i < kChunks; ++i) {
        SleepMs(kFeedPeriodMs);
        sem_post(&sem);
      }
    });
    int taken = 0;
    {
      Phase p("semaphore");
      while (taken < kChunks) {
        TakeWithTimeout(&sem);
        ++taken;
      }
    }
    producer.join();
    sem_destroy(&sem);
    std::printf("RESULT semaphore %d\n", taken);
  }
  Check(cudaFree(device), "cudaFree");
  std::fflush(stdout);
  return 0;
}
