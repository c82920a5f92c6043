// run_folder.h — where control sockets live, and the checks that make it private.
//
// The run folder is ${XDG_RUNTIME_DIR}/gpustall-<uid>/ (XDG_RUNTIME_DIR when it is an absolute
// path; /tmp otherwise). Everything in it can start a capture window in one of the user's
// processes, so the folder must be the user's alone: PrepareRunFolder creates it with mode 0700
// and then refuses it unless it is a real directory (not a symlink), owned by `uid`, with mode
// exactly 0700. A folder someone else made first (a squatter in /tmp) is refused, never chmod'ed
// or chown'ed into shape. Sockets inside are named <pid>.sock.
//
// Why the path check and bind() cannot race with an attacker: /tmp is sticky (nobody else may
// rename or remove our folder) and XDG_RUNTIME_DIR is the user's own; inside a 0700 folder only
// the user can create or replace entries.
//
// Thread safety: pure functions (PrepareRunFolder makes system calls, no shared state).
#ifndef GPUSTALL_AGENT_CONTROL_RUN_FOLDER_H_
#define GPUSTALL_AGENT_CONTROL_RUN_FOLDER_H_

#include <sys/types.h>

#include <string>

namespace gs {
namespace control {

// ${xdg_runtime_dir or /tmp}/gpustall-<uid>. `xdg_runtime_dir` may be nullptr; a relative or
// empty value is ignored (a relative folder would depend on the working directory).
std::string RunFolderPath(const char* xdg_runtime_dir, uid_t uid);

// <folder>/<pid>.sock
std::string SocketPath(const std::string& folder, pid_t pid);

// Creates `folder` (mode 0700; its parent must exist) unless it exists, then checks it as above.
// On refusal returns false with *error saying what is wrong ("... is owned by uid 1001, not
// 1000", "... has mode 0755, expected 0700", "... is a symbolic link").
bool PrepareRunFolder(const std::string& folder, uid_t uid, std::string* error);

}  // namespace control
}  // namespace gs

#endif  // GPUSTALL_AGENT_CONTROL_RUN_FOLDER_H_
