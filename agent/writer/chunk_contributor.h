// chunk_contributor.h — records that reach the trace by roads other than the API-call rings and
// the GPU activity buffer: the sampler's samples, NVTX ranges, process/host statistics.
//
// Each such producer buffers its records its own way (the hot-path rules hold for whatever runs
// on the application's threads) and implements ChunkContributor. The TraceWriter calls every
// registered contributor from Drain() on the writer thread and hands it a ChunkBuilder: the
// pending chunk plus the writer's interning tables, so a contributor's strings and stacks share
// ids with the API calls' (one stack table, one string table per trace) and it never needs to
// know how frames are symbolised or Python frames merged.
//
// Thread safety: DrainInto/AddStats run on the writer thread only, serialised with every other
// writer call (the Agent's writer mutex). What a contributor does on other threads to fill its
// buffers is its own business.
#ifndef GPUSTALL_AGENT_WRITER_CHUNK_CONTRIBUTOR_H_
#define GPUSTALL_AGENT_WRITER_CHUNK_CONTRIBUTOR_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "agent/python/python_stacks.h"
#include "proto/gstrace.pb.h"

namespace gs {

// A captured host stack as the recorder stores it: native return addresses (innermost first)
// and, in a Python thread, the Python frames it was running (innermost first). Either part may
// be empty.
struct StackView {
  const uint64_t* pcs = nullptr;
  int pc_count = 0;
  bool truncated = false;           // native part cut at the depth limit
  const PythonFrameRef* python = nullptr;
  int python_count = 0;
  bool python_truncated = false;
};

// The writer's side, as a contributor sees it during DrainInto.
class ChunkBuilder {
 public:
  // The pending chunk: add batches (samples, nvtx_ranges, process_stats, ...) here.
  virtual gpustall::trace::Chunk* chunk() = 0;
  // Interned string id (0 for ""); the definition goes into this chunk when new.
  virtual uint32_t InternString(const std::string& value) = 0;
  // Interned stack id (0 for an empty stack); new frames/stacks are symbolised and defined in
  // this chunk, Python frames merged into the native stack exactly as for API calls.
  virtual uint32_t InternStack(const StackView& stack) = 0;
  // Counts `n` records toward the chunk's size limit (an early flush when it fills up).
  virtual void CountRecords(size_t n) = 0;

 protected:
  ~ChunkBuilder() = default;
};

class ChunkContributor {
 public:
  virtual ~ChunkContributor() = default;
  // Moves everything buffered so far into the pending chunk. Returns the records moved.
  virtual size_t DrainInto(ChunkBuilder* builder) = 0;
  // Adds this producer's cumulative counters (e.g. samples_recorded/dropped) to `stats`.
  virtual void AddStats(gpustall::trace::Stats* stats) { (void)stats; }
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_WRITER_CHUNK_CONTRIBUTOR_H_
