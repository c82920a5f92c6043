// activity_buffers.h — the activity buffer protocol of real CUPTI, between record producers
// (application threads, simgpu's device thread) and the tool.
//
//  * Buffers belong to the tool: CUPTI asks for one through bufferRequested(&buf, &size, &max)
//    when a record does not fit in the current one (or there is none yet), fills it with packed
//    records, each at an 8-byte-aligned offset, and hands it back through
//    bufferCompleted(NULL, 0, buf, size, validSize) — never on the producing thread, always on
//    CUPTI's own worker thread.
//  * A buffer goes back when it is full (the next record does not fit, or maxNumRecords is
//    reached), on cuptiActivityFlushAll, and — with cuptiActivityFlushPeriod(ms) — full buffers
//    wait for the next period tick instead of going back at once.
//  * A record is dropped, and counted, when no buffer can take it: no callbacks registered, the
//    tool declined (buffer NULL), or the tool's fresh buffer is smaller than the record.
//    cuptiActivityGetNumDroppedRecords returns the count and resets it.
//
// Thread safety: every function may be called from any thread. The tool's bufferRequested is
// called on the producing thread without any lock held; bufferCompleted only on the worker.
// FlushAll blocks until the worker has handed back everything that was queued when it was
// called, except when called from inside bufferCompleted (it then only queues, as waiting for
// itself would deadlock).
#ifndef GPUSTALL_TESTS_SIMGPU_CUPTI_ACTIVITY_BUFFERS_H_
#define GPUSTALL_TESTS_SIMGPU_CUPTI_ACTIVITY_BUFFERS_H_

#include <cstddef>
#include <cstdint>

#include <cupti.h>

namespace simgpu_cupti {

// cuptiActivityRegisterCallbacks: replaces the pair; starts the worker thread.
void RegisterBufferCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                             CUpti_BuffersCallbackCompleteFunc completed);
bool BufferCallbacksRegistered();

// Copies one record (its full struct size; a multiple of 8) into the current buffer.
void AppendRecord(const void* record, size_t size);

// Told, on the producing thread and with no lock held, how long each bufferRequested call took
// (CLOCK_MONOTONIC ns), so that CUPTI's OVERHEAD records can report it. Requests made while the
// observer itself appends a record are not reported (no overhead record about an overhead
// record). nullptr: nobody is told.
using BufferRequestObserver = void (*)(uint64_t start_ns, uint64_t end_ns);
void SetBufferRequestObserver(BufferRequestObserver observer);

// cuptiActivityFlushAll. Every record held here is complete (records are written only once their
// operation has finished), so flag 0 and CUPTI_ACTIVITY_FLAG_FLUSH_FORCED both hand back the
// partially filled current buffer. Returns CUPTI_ERROR_INVALID_OPERATION without callbacks.
CUptiResult FlushAllBuffers(uint32_t flag);

// cuptiActivityFlushPeriod: 0 restores the default (full buffers go back at once).
void SetFlushPeriodMs(uint32_t period_ms);

// Records dropped since the last call; resets the count.
size_t TakeDroppedRecordCount();

// cuptiFinalize: flushes (forced), hands back unused buffers with validSize 0, and forgets the
// callbacks. A later cuptiActivityRegisterCallbacks starts afresh.
void FinalizeBuffers();

}  // namespace simgpu_cupti

#endif  // GPUSTALL_TESTS_SIMGPU_CUPTI_ACTIVITY_BUFFERS_H_
