#include "analyzer/import/imported_trace.h"

#include "analyzer/import/kineto/kineto_trace.h"

namespace gs::analyzer {

absl::StatusOr<std::unique_ptr<ImportedTrace>> OpenImported(const std::string& path) {
  if (kineto::LooksLikeJson(path)) {
    absl::StatusOr<std::unique_ptr<kineto::KinetoTrace>> t = kineto::KinetoTrace::Open(path);
    if (!t.ok()) return t.status();
    return std::unique_ptr<ImportedTrace>(std::move(*t));
  }
  return std::unique_ptr<ImportedTrace>();
}

bool IsImportedTrace(const std::string& path) { return kineto::LooksLikeJson(path); }

bool IsImportedTraceBeyondDoubt(const std::string& path) { return kineto::LooksLikeKinetoTrace(path); }

}  // namespace gs::analyzer
