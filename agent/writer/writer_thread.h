// writer_thread.h — the thread that drains the rings and writes the trace while a trace is open.
//
// Every 10 ms (whatever GS_FLUSH_MS says: rings are sized for ~10 ms of a busy thread) the loop
// drains the rings into the TraceWriter under the writer lock; every GS_FLUSH_MS it first asks the
// agent to flush the capture source (CUPTI's buffered GPU records), then writes a chunk. A chunk
// that fills up is written at once. The writer's first I/O error, or an exception, ends the loop
// and is reported to the owner once.
//
// Thread safety: Start and Stop are called by the agent's lifecycle code, never concurrently
// (core/ serialises them); the owner's methods are called on the writer thread.
#ifndef GPUSTALL_AGENT_WRITER_WRITER_THREAD_H_
#define GPUSTALL_AGENT_WRITER_WRITER_THREAD_H_

#include <pthread.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

#include "agent/core/mutex.h"
#include "agent/writer/trace_writer.h"

namespace gs {

class WriterThread {
 public:
  // What the loop asks of the agent around it (agent/core). Called on the writer thread.
  class Owner {
   public:
    virtual ~Owner() = default;
    // A periodic flush is due: hand the capture source's buffered records to the recorder now, so
    // that they go into this chunk. Called without the writer lock.
    virtual void FlushCaptureSource() = 0;
    // The drain that just ran moved records (so a CUDA call has completed). Called with the
    // writer lock held.
    virtual void OnRecordsDrained() = 0;
    // The writer failed (its sticky error text) / the loop threw. The loop ends after either.
    // Called without the writer lock.
    virtual void OnWriteError(const std::string& error) = 0;
    virtual void OnInternalError() = 0;
  };

  WriterThread() = default;
  WriterThread(const WriterThread&) = delete;
  WriterThread& operator=(const WriterThread&) = delete;

  // Starts the loop on a new thread named "gpustall-writer", with every signal blocked (signals
  // belong to the application's threads). `writer`, `writer_mu` and `owner` must outlive the
  // thread (until Stop returns). False when the thread cannot be created.
  bool Start(TraceWriter* writer, Mutex* writer_mu, uint32_t flush_ms, Owner* owner);

  // Ends the loop and joins the thread; the writer is left as the last drain left it (its final
  // drain is TraceWriter::Finish's job). Start may be called again afterwards (the next on-demand
  // window). No-op when not started.
  void Stop();

  bool started() const { return started_; }

 private:
  static void* Main(void* arg);
  void Loop();

  TraceWriter* writer_ = nullptr;
  Mutex* writer_mu_ = nullptr;
  uint64_t flush_ns_ = 0;
  Owner* owner_ = nullptr;
  bool started_ = false;
  pthread_t thread_{};
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;  // guarded by stop_mu_ (std::mutex: the condition variable needs it)
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_WRITER_WRITER_THREAD_H_
