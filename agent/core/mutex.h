// mutex.h — the agent's mutex, with Clang thread-safety annotations for its lock order.
//
// The agent may not link Abseil (agent/CMakeLists.txt: Debian's static Abseil cannot go into a
// shared library), so absl::Mutex is not available; this is std::mutex with the capability
// attributes that let clang's -Wthread-safety check who holds what, and that state the lock order
// where mutexes nest (GS_ACQUIRED_AFTER). With GCC the annotations compile to nothing; ctest's
// lint.agent_thread_safety (thread_safety_check.py) runs clang's analysis over every agent source.
//
// Thread safety: as std::mutex (not recursive).
#ifndef GPUSTALL_AGENT_CORE_MUTEX_H_
#define GPUSTALL_AGENT_CORE_MUTEX_H_

#include <mutex>

#if defined(__clang__)
#define GS_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define GS_THREAD_ANNOTATION(x)
#endif

#define GS_CAPABILITY(x) GS_THREAD_ANNOTATION(capability(x))
#define GS_SCOPED_CAPABILITY GS_THREAD_ANNOTATION(scoped_lockable)
#define GS_GUARDED_BY(x) GS_THREAD_ANNOTATION(guarded_by(x))
#define GS_PT_GUARDED_BY(x) GS_THREAD_ANNOTATION(pt_guarded_by(x))
#define GS_ACQUIRED_AFTER(...) GS_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define GS_ACQUIRED_BEFORE(...) GS_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define GS_REQUIRES(...) GS_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define GS_EXCLUDES(...) GS_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define GS_ACQUIRE(...) GS_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define GS_RELEASE(...) GS_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define GS_NO_THREAD_SAFETY_ANALYSIS GS_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace gs {

class GS_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() GS_ACQUIRE() { mu_.lock(); }
  void Unlock() GS_RELEASE() { mu_.unlock(); }

 private:
  std::mutex mu_;
};

// Holds `mu` for the scope, like std::lock_guard.
class GS_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) GS_ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() GS_RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_CORE_MUTEX_H_
