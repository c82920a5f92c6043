// control_socket.h — the on-demand listener: one UNIX socket per process, served by one thread.
//
// With GS_ON_DEMAND=1 the agent activates dormant (agent/core/on_demand.cc) and starts a ControlListener:
// it binds <run folder>/<pid>.sock (run_folder.h), and a background thread ("gpustall-ctl")
// blocks in poll() on it. Each connection carries one request line and gets one reply line
// (command.h). The listener turns `start`/`stop` into WindowController calls, and stops a window
// started with a duration itself when the duration is up, and opens and stops periodic windows
// (GS_PERIODIC_MS) on its own clock.
//
// Who may talk to it: the folder is 0700, and every connection's peer credentials (SO_PEERCRED,
// taken by the kernel at connect time, not claimed by the peer) must carry the owner's uid.
// root gets no exception: root can reach the socket through the folder, but controlling another
// user's job is then one command away from writing traces (with their command lines) into that
// user's output folder; root can run gsctl as the user (`runuser -u USER gsctl ...`) if it must.
//
// What it never does to the host process: it does not touch signal dispositions (its thread
// blocks every signal; replies are sent with MSG_NOSIGNAL, so a peer that hangs up cannot raise
// SIGPIPE), it runs on its own thread (errno is per thread), every descriptor is O_CLOEXEC, and a
// slow or silent peer costs at most kPeerTimeoutMs before it is dropped.
//
// Lifetime: the Agent creates one listener per process image, on the heap, and never frees it
// (the thread may still be in poll() at exit). RemoveSocket() at exit/exec unlinks the socket
// (only in the process that bound it: a forked child inherits the atexit handler). In a forked
// child, OnForkChild() closes the inherited descriptors without touching the parent's socket file;
// the child starts its own listener when it activates.
//
// Thread safety: Start, Stop, RemoveSocket are called by the agent's control path (activation,
// exit, tests), never concurrently with each other; OnForkChild in the child right after fork.
// The WindowController is called on the listener thread only, one call at a time.
#ifndef GPUSTALL_AGENT_CONTROL_CONTROL_SOCKET_H_
#define GPUSTALL_AGENT_CONTROL_CONTROL_SOCKET_H_

#include <pthread.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "agent/control/command.h"

namespace gs {
namespace control {

// What the listener asks of the agent. Each call returns the facts of an "ok" reply
// (space-separated key=value words), or false with *error set.
class WindowController {
 public:
  virtual ~WindowController() = default;
  virtual bool StartWindow(std::string* facts, std::string* error) = 0;
  virtual bool StopWindow(std::string* facts, std::string* error) = 0;
  // state=standby|recording|finished|disabled windows=N trace=PATH (the current or last window).
  virtual std::string Status() = 0;
};

inline constexpr int kPeerTimeoutMs = 2000;

// What serving one connection did (the listener keeps the window timer from it).
struct Served {
  bool started = false;        // a window was started
  uint64_t duration_ns = 0;    // ... with this duration (0: until stop)
  bool stopped = false;        // a window was stopped
};

// The peer's uid from SO_PEERCRED; false if the socket cannot say.
bool PeerUid(int fd, uid_t* uid);

// Serves one accepted connection on `fd` (not closed here): checks the peer (must be
// `allowed_uid`), reads one request line within kPeerTimeoutMs, calls `controller`, writes the
// reply. `identity` (pid=... job=... rank=... command=...) is added to the status reply; its
// command= part must be last. A peer with another uid gets "error permission denied ..." and
// nothing else happens.
Served ServeConnection(int fd, uid_t allowed_uid, WindowController& controller,
                       const std::string& identity);

class ControlListener {
 public:
  struct Options {
    std::string folder;      // the run folder (run_folder.h); prepared and checked by Start
    uid_t uid = 0;           // the only uid allowed to connect (and the folder's owner)
    pid_t pid = 0;           // names the socket
    std::string identity;    // for status: job=... rank=... command=... (command last)
    // GS_PERIODIC_MS: the thread itself opens a window every `periodic_ns` from its start (the
    // first at once) and stops it after `periodic_window_ns` (shorter than the period). A start
    // refused while another window records (one gsctl started) skips that period; one refused for
    // any other reason (the agent disabled or finished, the trace not creatable) ends the
    // schedule. 0: windows only on request.
    uint64_t periodic_ns = 0;
    uint64_t periodic_window_ns = 0;
  };

  ControlListener() = default;
  ControlListener(const ControlListener&) = delete;
  ControlListener& operator=(const ControlListener&) = delete;

  // Prepares the folder, binds and listens, and starts the thread. `controller` must outlive the
  // listener. False with *error (one line, for `gpustall: ...`) when any step fails; nothing is
  // left behind then (no socket file, no thread).
  bool Start(const Options& options, WindowController* controller, std::string* error);
  // Unlinks the socket if this process bound it; the thread then serves nobody (nobody can
  // connect). Idempotent. For exit and exec.
  void RemoveSocket();
  // Tests: wakes the thread, joins it, closes the socket and removes it.
  void Stop();
  // In a forked child (single-threaded, async-signal-safe calls only): closes the inherited
  // descriptors; the parent's socket file stays.
  void OnForkChild();

  const std::string& socket_path() const { return socket_path_; }

 private:
  static void* ThreadMain(void* self);
  void Run();

  Options options_;
  WindowController* controller_ = nullptr;
  std::string socket_path_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: Stop() wakes the thread's poll()
  pthread_t thread_{};
  bool thread_started_ = false;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> socket_removed_{false};
};

}  // namespace control
}  // namespace gs

#endif  // GPUSTALL_AGENT_CONTROL_CONTROL_SOCKET_H_
