// run_folder.cc
#include "agent/control/run_folder.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

namespace gs {
namespace control {

std::string RunFolderPath(const char* xdg_runtime_dir, uid_t uid) {
  std::string base = "/tmp";
  if (xdg_runtime_dir != nullptr && xdg_runtime_dir[0] == '/' && strlen(xdg_runtime_dir) < 4096) {
    base = xdg_runtime_dir;
    while (base.size() > 1 && base.back() == '/') base.pop_back();
  }
  return base + "/gpustall-" + std::to_string(uid);
}

std::string SocketPath(const std::string& folder, pid_t pid) {
  return folder + "/" + std::to_string(pid) + ".sock";
}

bool PrepareRunFolder(const std::string& folder, uid_t uid, std::string* error) {
  if (mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST) {
    *error = "cannot create the run folder " + folder + ": " + strerror(errno);
    return false;
  }
  // lstat, not stat: a symlink planted where our folder should be is refused, not followed.
  struct stat st;
  if (lstat(folder.c_str(), &st) != 0) {
    *error = "cannot check the run folder " + folder + ": " + strerror(errno);
    return false;
  }
  if (S_ISLNK(st.st_mode)) {
    *error = "run folder " + folder + " is a symbolic link; refusing it";
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    *error = "run folder " + folder + " is not a directory; refusing it";
    return false;
  }
  if (st.st_uid != uid) {
    *error = "run folder " + folder + " is owned by uid " + std::to_string(st.st_uid) + ", not " +
             std::to_string(uid) + "; refusing it";
    return false;
  }
  if ((st.st_mode & 07777) != 0700) {
    char mode[16];
    snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
    *error = "run folder " + folder + " has mode " + mode + ", expected 0700; refusing it";
    return false;
  }
  return true;
}

}  // namespace control
}  // namespace gs
