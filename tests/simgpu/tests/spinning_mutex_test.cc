// spinning_mutex_test.cc — the timeline's lock excludes like a mutex, whether a thread gets it
// while spinning or after it went to sleep, and works with condition_variable_any as the
// timeline uses it (driver/spinning_mutex.h).
#include "driver/spinning_mutex.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace {

TEST(SpinningMutex, ThreadsThatContendNeverOverlap) {
  simgpu::SpinningMutex mu;
  long counter = 0;  // not atomic: only the lock keeps the increments whole
  int inside = 0, overlaps = 0;
  constexpr int kThreads = 4, kRounds = 200000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) {
        std::lock_guard<simgpu::SpinningMutex> lock(mu);
        if (++inside != 1) ++overlaps;
        ++counter;
        --inside;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(counter, static_cast<long>(kThreads) * kRounds);
  EXPECT_EQ(overlaps, 0);
}

TEST(SpinningMutex, HeldByASleeperIsNotTakenUntilReleased) {
  simgpu::SpinningMutex mu;
  mu.lock();
  EXPECT_FALSE(mu.try_lock());
  bool got = false;
  std::thread waiter([&] {
    std::lock_guard<simgpu::SpinningMutex> lock(mu);  // spins out, then sleeps until unlock
    got = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // far past the spin
  EXPECT_FALSE(got);  // we hold the lock: the waiter has not passed it (nor raced this read)
  mu.unlock();
  waiter.join();
  EXPECT_TRUE(got);
}

TEST(SpinningMutex, ConditionVariableAnyWaitsAndWakes) {
  simgpu::SpinningMutex mu;
  std::condition_variable_any cv;
  bool ready = false;
  std::thread producer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::lock_guard<simgpu::SpinningMutex> lock(mu);
    ready = true;
    cv.notify_all();
  });
  std::unique_lock<simgpu::SpinningMutex> lock(mu);
  EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return ready; }));
  lock.unlock();
  producer.join();
}

}  // namespace
