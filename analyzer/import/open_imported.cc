#include "analyzer/import/open_imported.h"

#include "absl/strings/match.h"
#include "analyzer/import/kineto/kineto_trace.h"

namespace gs::analyzer {

bool IsImportedTrace(absl::string_view head) { return kineto::HeadLooksLikeJson(head); }

absl::StatusOr<std::unique_ptr<ImportedTrace>> OpenImported(int fd, const std::string& path) {
  // PyTorch profiler JSON is the only imported format so far: IsImportedTrace said it was JSON.
  absl::StatusOr<std::unique_ptr<kineto::KinetoTrace>> t = kineto::KinetoTrace::FromFd(fd, path);
  if (!t.ok()) return t.status();
  return std::unique_ptr<ImportedTrace>(std::move(*t));
}

bool HasImportedTraceName(absl::string_view path) {
  return absl::EndsWith(path, ".json") || absl::EndsWith(path, ".json.gz");
}

}  // namespace gs::analyzer
