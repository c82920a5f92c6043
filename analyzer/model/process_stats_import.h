// process_stats_import.h — gpustall.trace.ProcessStats (with its HostStats) to the model's
// ProcessSample (process_activity.h). Part of the importer: the only place that knows both.
#ifndef GPUSTALL_ANALYZER_MODEL_PROCESS_STATS_IMPORT_H_
#define GPUSTALL_ANALYZER_MODEL_PROCESS_STATS_IMPORT_H_

#include "analyzer/model/process_activity.h"
#include "proto/gstrace.pb.h"

namespace gs::analyzer {

ProcessSample ProcessSampleFromProto(const gpustall::trace::ProcessStats& p);

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_MODEL_PROCESS_STATS_IMPORT_H_
