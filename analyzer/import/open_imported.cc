#include "analyzer/import/open_imported.h"

#include <zlib.h>

#include "absl/strings/match.h"
#include "analyzer/import/kineto/kineto_trace.h"

namespace gs::analyzer {

bool IsImportedTrace(absl::string_view head) { return kineto::HeadLooksLikeJson(head); }

std::string HeadText(absl::string_view head) {
  const bool gzip = head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
                    static_cast<unsigned char>(head[1]) == 0x8b;
  if (!gzip) return std::string(head);
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) return "";
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(head.data()));
  zs.avail_in = static_cast<uInt>(head.size());
  std::string text;
  char buf[16384];
  // A cut stream inflates up to where it stops; 1 MiB of text is more than any caller looks at.
  while (text.size() < (1 << 20)) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    const int rc = inflate(&zs, Z_NO_FLUSH);
    text.append(buf, sizeof buf - zs.avail_out);
    if (rc != Z_OK) break;  // the end, the end of the input, or damage
  }
  inflateEnd(&zs);
  return text;
}

absl::StatusOr<std::unique_ptr<ImportedTrace>> OpenImported(int fd, const std::string& path,
                                                            const std::function<void(uint64_t)>& progress) {
  // PyTorch profiler JSON is the only imported format so far: IsImportedTrace said it was JSON.
  absl::StatusOr<std::unique_ptr<kineto::KinetoTrace>> t = kineto::KinetoTrace::FromFd(fd, path, progress);
  if (!t.ok()) return t.status();
  return std::unique_ptr<ImportedTrace>(std::move(*t));
}

bool HasImportedTraceName(absl::string_view path) {
  return absl::EndsWith(path, ".json") || absl::EndsWith(path, ".json.gz");
}

}  // namespace gs::analyzer
