// summary_file.h — RankSummary to and from a summary file (proto/gssummary.proto: 8 magic bytes,
// then one RankSummaryFile message).
//
// Thread safety: none needed; each call is independent.
#ifndef GPUSTALL_ANALYZER_SUMMARY_SUMMARY_FILE_H_
#define GPUSTALL_ANALYZER_SUMMARY_SUMMARY_FILE_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analyzer/ranks/rank_summary.h"

namespace gs::analyzer {

inline constexpr char kSummaryMagic[8] = {'\x89', 'G', 'S', 'S', 'U', 'M', 'R', 'Y'};

std::string EncodeRankSummary(const RankSummary& summary);
// InvalidArgument when `bytes` is not a summary (wrong magic, undecodable), naming `name`.
absl::StatusOr<RankSummary> DecodeRankSummary(const std::string& bytes, const std::string& name);

absl::Status WriteRankSummary(const RankSummary& summary, const std::string& path);
absl::StatusOr<RankSummary> ReadRankSummary(const std::string& path);
// True when `head`, a file's first bytes, starts with kSummaryMagic (false for traces and others).
// On bytes already read: the job's intake opens each file once (cli/job_inputs.h).
bool HasSummaryMagic(std::string_view head);

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_SUMMARY_SUMMARY_FILE_H_
