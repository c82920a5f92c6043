// control_socket.cc
#include "agent/control/control_socket.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent/control/run_folder.h"
#include "agent/core/agent_thread.h"
#include "agent/core/clock.h"

namespace gs {
namespace control {
namespace {

void SendAll(int fd, const std::string& text) {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    // MSG_NOSIGNAL: a peer that hung up must not raise SIGPIPE in the host process.
    const ssize_t n = send(fd, p, left, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

// Reads up to and including the first '\n' (at most kMaxCommandLine + 1 bytes), within the
// peer timeout. False on timeout, error, or a line that is too long.
bool ReadLine(int fd, std::string* line) {
  const uint64_t deadline = SystemMonotonicNs() + static_cast<uint64_t>(kPeerTimeoutMs) * 1000000u;
  char buffer[kMaxCommandLine + 1];
  size_t used = 0;
  while (used < sizeof(buffer)) {
    const uint64_t now = SystemMonotonicNs();
    if (now >= deadline) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>((deadline - now) / 1000000u) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    const ssize_t n = recv(fd, buffer + used, sizeof(buffer) - used, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: a last line without '\n' is accepted
    const void* nl = memchr(buffer + used, '\n', static_cast<size_t>(n));
    used += static_cast<size_t>(n);
    if (nl != nullptr) {
      line->assign(buffer, static_cast<size_t>(static_cast<const char*>(nl) - buffer) + 1);
      return true;
    }
  }
  if (used == 0 || used > kMaxCommandLine) return false;
  line->assign(buffer, used);
  return true;
}

}  // namespace

bool PeerUid(int fd, uid_t* uid) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof(cred)) return false;
  *uid = cred.uid;
  return true;
}

Served ServeConnection(int fd, uid_t allowed_uid, WindowController& controller,
                       const std::string& identity) {
  Served served;
  uid_t peer = 0;
  if (!PeerUid(fd, &peer)) {
    SendAll(fd, ErrorReply("permission denied: cannot read the peer's credentials"));
    return served;
  }
  if (peer != allowed_uid) {
    SendAll(fd, ErrorReply("permission denied: uid " + std::to_string(peer) +
                           " may not control this process (owner uid " + std::to_string(allowed_uid) + ")"));
    return served;
  }
  std::string line;
  if (!ReadLine(fd, &line)) {
    SendAll(fd, ErrorReply("no request line within " + std::to_string(kPeerTimeoutMs) +
                           " ms (or longer than " + std::to_string(kMaxCommandLine) + " bytes)"));
    return served;
  }
  Command command;
  std::string error;
  if (!ParseCommand(line, &command, &error)) {
    SendAll(fd, ErrorReply(error));
    return served;
  }
  std::string facts;
  switch (command.kind) {
    case Command::Kind::kStatus: {
      // identity ends with command=..., which may contain spaces: it goes last.
      facts = controller.Status();
      const size_t pid_end = identity.find(' ');
      SendAll(fd, OkReply(identity.substr(0, pid_end) + " " + facts +
                          (pid_end == std::string::npos ? "" : identity.substr(pid_end))));
      return served;
    }
    case Command::Kind::kStart:
      if (!controller.StartWindow(&facts, &error)) break;
      served.started = true;
      served.duration_ns = command.duration_ns;
      SendAll(fd, OkReply(facts + " duration_ns=" + std::to_string(command.duration_ns)));
      return served;
    case Command::Kind::kStop:
      if (!controller.StopWindow(&facts, &error)) break;
      served.stopped = true;
      SendAll(fd, OkReply(facts));
      return served;
  }
  SendAll(fd, ErrorReply(error));
  return served;
}

bool ControlListener::Start(const Options& options, WindowController* controller, std::string* error) {
  options_ = options;
  controller_ = controller;
  if (!PrepareRunFolder(options.folder, options.uid, error)) return false;
  socket_path_ = SocketPath(options.folder, options.pid);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket_path_.size() >= sizeof(address.sun_path)) {
    *error = "control socket path " + socket_path_ + " is longer than " +
             std::to_string(sizeof(address.sun_path) - 1) + " bytes (set XDG_RUNTIME_DIR to a shorter folder)";
    return false;
  }
  memcpy(address.sun_path, socket_path_.c_str(), socket_path_.size() + 1);
  listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  auto fail = [&](const std::string& what) {
    *error = what + ": " + strerror(errno);
    if (listen_fd_ >= 0) close(listen_fd_);
    if (wake_fd_ >= 0) close(wake_fd_);
    listen_fd_ = wake_fd_ = -1;
    return false;
  };
  if (listen_fd_ < 0 || wake_fd_ < 0) return fail("cannot create the control socket");
  // A socket of the same name is a leftover of a dead process with our pid (pids are unique
  // among live processes), in a folder only we can write to.
  unlink(socket_path_.c_str());
  if (bind(listen_fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0)
    return fail("cannot bind the control socket " + socket_path_);
  chmod(socket_path_.c_str(), 0600);  // the folder already keeps others out; belt and braces
  if (listen(listen_fd_, 8) != 0) {
    unlink(socket_path_.c_str());
    return fail("cannot listen on the control socket " + socket_path_);
  }
  const int rc = StartAgentThread("gpustall-ctl", &ThreadMain, this, &thread_);
  if (rc != 0) {
    unlink(socket_path_.c_str());
    errno = rc;
    return fail("cannot start the control thread");
  }
  thread_started_ = true;
  return true;
}

void* ControlListener::ThreadMain(void* self) {
  static_cast<ControlListener*>(self)->Run();
  return nullptr;
}

void ControlListener::Run() {
  uint64_t window_deadline = 0;  // 0: no timed window running
  // The next periodic window's start (the first at once); 0: no schedule.
  const uint64_t period = options_.periodic_ns;
  uint64_t next_window = period != 0 ? SystemMonotonicNs() : 0;
  while (!stopping_.load(std::memory_order_acquire)) {
    uint64_t now = SystemMonotonicNs();
    if (window_deadline != 0 && now >= window_deadline) {
      window_deadline = 0;
      std::string facts, error;
      controller_->StopWindow(&facts, &error);  // fails only if already stopped: fine
    }
    if (next_window != 0 && now >= next_window) {
      std::string facts, error;
      // The window's length counts from its start, its opening included (the agent records calls
      // from early in it: agent/core/trace_session.cc).
      if (controller_->StartWindow(&facts, &error)) {
        window_deadline = now + options_.periodic_window_ns;
        now = SystemMonotonicNs();
      } else if (controller_->Status().rfind("state=recording", 0) != 0) {
        next_window = 0;  // not for lack of a free slot: the next periods would fail alike
      }
      // A late wake-up (a stopped process, a long window start) skips the periods it missed.
      if (next_window != 0) next_window += ((now - next_window) / period + 1) * period;
    }
    int timeout_ms = -1;
    uint64_t wake = window_deadline;
    if (next_window != 0 && (wake == 0 || next_window < wake)) wake = next_window;
    if (wake != 0) timeout_ms = now >= wake ? 0 : static_cast<int>((wake - now) / 1000000u) + 1;
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    const int ready = poll(fds, 2, timeout_ms);
    if (stopping_.load(std::memory_order_acquire)) break;
    if (ready < 0 && errno != EINTR) break;  // nothing sensible left to do; the job goes on
    if (ready <= 0 || (fds[0].revents & POLLIN) == 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    const Served served = ServeConnection(fd, options_.uid, *controller_, options_.identity);
    close(fd);
    if (served.started) window_deadline = served.duration_ns == 0 ? 0 : SystemMonotonicNs() + served.duration_ns;
    if (served.stopped) window_deadline = 0;
  }
}

void ControlListener::RemoveSocket() {
  if (socket_path_.empty() || getpid() != options_.pid) return;
  if (!socket_removed_.exchange(true)) unlink(socket_path_.c_str());
}

void ControlListener::Stop() {
  if (thread_started_) {
    stopping_.store(true, std::memory_order_release);
    const uint64_t one = 1;
    if (write(wake_fd_, &one, sizeof(one)) < 0) {
      // The counter cannot overflow with one write; nothing to do if it fails anyway.
    }
    pthread_join(thread_, nullptr);
    thread_started_ = false;
  }
  RemoveSocket();
  if (listen_fd_ >= 0) close(listen_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
  listen_fd_ = wake_fd_ = -1;
}

void ControlListener::OnForkChild() {
  // The thread did not survive the fork; the socket file is the parent's.
  thread_started_ = false;
  socket_removed_.store(true);
  if (listen_fd_ >= 0) close(listen_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
  listen_fd_ = wake_fd_ = -1;
}

}  // namespace control
}  // namespace gs
