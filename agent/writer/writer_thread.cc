// writer_thread.cc — the writer thread's loop (see writer_thread.h).
#include "agent/writer/writer_thread.h"

#include <chrono>

#include "agent/core/agent_thread.h"
#include "agent/core/clock.h"

namespace gs {

bool WriterThread::Start(TraceWriter* writer, Mutex* writer_mu, uint32_t flush_ms, Owner* owner) {
  writer_ = writer;
  writer_mu_ = writer_mu;
  flush_ns_ = static_cast<uint64_t>(flush_ms) * 1000000u;
  owner_ = owner;
  if (StartAgentThread("gpustall-writer", &WriterThread::Main, this, &thread_) != 0) return false;
  started_ = true;
  return true;
}

void WriterThread::Stop() {
  if (!started_) return;
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  pthread_join(thread_, nullptr);
  started_ = false;
  std::lock_guard<std::mutex> lock(stop_mu_);
  stop_ = false;  // for the next on-demand window's writer thread
}

void* WriterThread::Main(void* arg) {
  static_cast<WriterThread*>(arg)->Loop();
  return nullptr;
}

void WriterThread::Loop() {
  // Drain every 10 ms whatever GS_FLUSH_MS says: rings are sized for ~10 ms of a busy thread.
  constexpr auto kDrainPeriod = std::chrono::milliseconds(10);
  uint64_t last_flush = MonotonicNs();
  try {
    while (true) {
      {
        std::unique_lock<std::mutex> lock(stop_mu_);
        stop_cv_.wait_for(lock, kDrainPeriod, [this] { return stop_; });
        if (stop_) break;
      }
      AnchorTscClock();  // keeps the TSC line on CLOCK_MONOTONIC (clock.h)
      const uint64_t now = MonotonicNs();
      const bool flush_due = now - last_flush >= flush_ns_;
      if (flush_due) owner_->FlushCaptureSource();
      std::string failure;
      {
        MutexLock lock(writer_mu_);
        const size_t drained = writer_->Drain();
        if (drained > 0) owner_->OnRecordsDrained();
        if (flush_due || writer_->chunk_full()) {
          writer_->FlushChunk();
          last_flush = now;
        }
        if (writer_->failed()) failure = writer_->error();
      }
      if (!failure.empty()) {
        owner_->OnWriteError(failure);
        break;
      }
    }
  } catch (...) {
    owner_->OnInternalError();
  }
}

}  // namespace gs
