#!/usr/bin/env python3
"""ondemand_test.py -- one case of on-demand capture (ctest runs one case per test).

    ondemand_test.py CASE --gsrun tools/gsrun --gsctl tools/gsctl --build-dir BUILD
                     --simgpu-lib DIR --workload "CMD ARGS" --gsanalyze PATH --dump PATH
                     --work-dir DIR

The workload is the data-starved training loop on simgpu (one step every ~20 ms), run with a step
count far beyond the test's length under `gsrun --on-demand`, and killed at the end. Every case
uses its own XDG_RUNTIME_DIR, so it never meets the user's (or another test's) run folder.
Exit status 0 = pass, 77 = cannot run here (skipped).
"""
import argparse
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testlib"))
from gstest import check, exit_status, fail  # noqa: E402  (tests/testlib)

LAUNCHER_VARS = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "SLURM_PROCID", "SLURM_LOCALID",
                 "SLURM_JOB_ID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "TORCHELASTIC_RUN_ID", "PBS_JOBID",
                 "LSB_JOBID", "PMIX_NAMESPACE")
LISTEN_TIMEOUT_S = 30   # the workload's first CUDA call, on a loaded machine
COMMAND_TIMEOUT_S = 30
SKIP = 77


class Case:
    def __init__(self, args, name, work_dir=None):
        self.args = args
        self.dir = os.path.join(work_dir or args.work_dir, name)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self.runtime_dir = os.path.join(self.dir, "xdg")
        os.makedirs(self.runtime_dir)
        os.chmod(self.runtime_dir, 0o700)
        self.run_folder = os.path.join(self.runtime_dir, "gpustall-%d" % os.geteuid())
        self.traces = os.path.join(self.dir, "traces")
        self.proc = None
        self.gsctl_path = None  # default: args.gsctl

    def environ(self, extra=None):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("GS_") and not k.startswith("SIMGPU_") and k not in LAUNCHER_VARS
               and k not in ("LD_PRELOAD", "CUDA_INJECTION64_PATH")}
        env["LD_LIBRARY_PATH"] = self.args.simgpu_lib
        env["GS_BUILD_DIR"] = self.args.build_dir
        env["XDG_RUNTIME_DIR"] = self.runtime_dir
        env["SLURM_JOB_ID"] = "ondemand-test"  # the job gsctl --job finds
        env.update(extra or {})
        return env

    def start_workload(self, steps=100000, extra=None, mode=("--on-demand",)):
        cmd = [self.args.gsrun] + list(mode) + ["-q", "-o", self.traces + "/", "--"] + \
            shlex.split(self.args.workload) + ["--steps", str(steps)]
        self.stderr_path = os.path.join(self.dir, "workload.stderr")
        self.proc = subprocess.Popen(cmd, env=self.environ(extra), cwd=self.dir,
                                     stdout=subprocess.DEVNULL, stderr=open(self.stderr_path, "wb"))
        return self.proc

    def socket_path(self):
        return os.path.join(self.run_folder, "%d.sock" % self.proc.pid)

    def wait_listening(self):
        deadline = time.monotonic() + LISTEN_TIMEOUT_S
        while time.monotonic() < deadline:
            if os.path.exists(self.socket_path()):
                return True
            if self.proc.poll() is not None:
                fail("the workload exited (%s) before listening; stderr: %s" % (self.proc.returncode, self.stderr()))
                return False
            time.sleep(0.05)
        fail("no control socket %s after %ds; stderr: %s" % (self.socket_path(), LISTEN_TIMEOUT_S, self.stderr()))
        return False

    def stderr(self):
        with open(self.stderr_path, errors="replace") as f:
            return f.read()[-3000:]

    def gsctl(self, *words, prefix=(), env_extra=None):
        # Another uid cannot run an interpreter under /root (pyenv): the system one then.
        python = "/usr/bin/python3" if prefix and os.path.exists("/usr/bin/python3") else sys.executable
        cmd = list(prefix) + [python, self.gsctl_path or self.args.gsctl] + list(words)
        p = subprocess.run(cmd, env=self.environ(env_extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=COMMAND_TIMEOUT_S)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")

    def trace_files(self):
        if not os.path.isdir(self.traces):
            return []
        return sorted(os.path.join(self.traces, n) for n in os.listdir(self.traces))

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)

    def dump(self, trace):
        p = subprocess.run([self.args.dump, trace], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        if not check(p.returncode == 0, "%s: trace_to_json failed: %s" % (trace, p.stderr.decode()[-500:])):
            return []
        return [json.loads(line) for line in p.stdout.decode().splitlines() if line.strip()]


def case_windows(args):
    """Two windows in a running loop: each is a complete trace of its own time; nothing while dormant."""
    c = Case(args, "windows")
    c.start_workload()
    try:
        if not c.wait_listening():
            return
        time.sleep(0.5)  # dormant for a while: dozens of steps, hundreds of CUDA calls
        check(c.trace_files() == [], "files written while dormant: %s" % c.trace_files())
        rc, out, err = c.gsctl("list")
        check(rc == 0 and str(c.proc.pid) in out and "standby" in out and "ondemand-test" in out,
              "gsctl list: rc=%d out=%r err=%r" % (rc, out, err))

        windows = []
        # Window 1: --job (the job's processes on this host), stopped by `gsctl stop`.
        t0 = time.monotonic_ns()
        rc, out, err = c.gsctl("start", "--job", "ondemand-test")
        check(rc == 0 and "window 1 recording to" in out, "start 1: rc=%d out=%r err=%r" % (rc, out, err))
        rc, out, err = c.gsctl("status", "--pid", str(c.proc.pid))
        check(rc == 0 and "recording" in out, "status while recording: rc=%d out=%r err=%r" % (rc, out, err))
        rc, out, err = c.gsctl("start")
        check(rc != 0 and "already recording" in err, "a second start must be refused: %r %r" % (out, err))
        time.sleep(1.0)
        rc, out, err = c.gsctl("stop")
        t1 = time.monotonic_ns()
        check(rc == 0 and "window 1 written to" in out, "stop 1: rc=%d out=%r err=%r" % (rc, out, err))
        windows.append((t0, t1))
        files_after_1 = c.trace_files()
        time.sleep(0.5)  # dormant again
        check(c.trace_files() == files_after_1, "files changed while dormant: %s" % c.trace_files())
        rc, out, err = c.gsctl("stop")
        check(rc != 0 and "no capture window is recording" in err, "stop while dormant: %r %r" % (out, err))

        # Window 2: --pid, with a duration (the agent stops it by itself).
        t2 = time.monotonic_ns()
        rc, out, err = c.gsctl("start", "--pid", str(c.proc.pid), "--duration", "800ms")
        check(rc == 0 and "window 2 recording to" in out and "for 800ms" in out,
              "start 2: rc=%d out=%r err=%r" % (rc, out, err))
        deadline = time.monotonic() + 20
        out = ""
        while time.monotonic() < deadline:
            rc, out, err = c.gsctl("status", "--pid", str(c.proc.pid))
            if "standby" in out:
                break
            time.sleep(0.1)
        t3 = time.monotonic_ns()
        check("standby, 2 window(s)" in out, "window 2 did not end by itself: %r" % out)
        windows.append((t2, t3))
        check(c.proc.poll() is None, "the workload died during the windows: %s" % c.stderr())
    finally:
        c.kill()

    # Killed (SIGKILL): its socket is stale; gsctl list removes it.
    rc, out, err = c.gsctl("list")
    check(rc == 0 and "removed the stale socket of process %d" % c.proc.pid in err,
          "stale socket not reported: %r %r" % (out, err))
    check(not os.path.exists(c.socket_path()), "stale socket still there")

    files = c.trace_files()
    base = os.path.join(c.traces, "%s-rnorank-%d" % (os.uname().nodename, c.proc.pid))
    expected = [base + ".window-1.gstrace", base + ".window-2.gstrace"]
    if not check(files == expected, "trace files %s, expected %s" % (files, expected)):
        return
    for n, (trace, (start, end)) in enumerate(zip(files, windows), 1):
        records = c.dump(trace)
        header = [r for r in records if r["type"] == "header"]
        api = [r for r in records if r["type"] == "api"]
        acts = [r for r in records if r["type"] == "activity"]
        ends = [r for r in records if r["type"] == "end"]
        check(header and header[0]["pid"] == c.proc.pid, "window %d: header %s" % (n, header))
        check(header and header[0]["mode_text"] == "cupti", "window %d: capture mode %s" % (n, header))
        check(ends and ends[0]["clean_end"] and ends[0]["damage"] == 0, "window %d: not a complete trace: %s" % (n, ends))
        check(len(api) > 20 and len(acts) > 20, "window %d: %d API calls, %d activities" % (n, len(api), len(acts)))
        outside = [r for r in api if r["enter_ns"] < start or r["exit_ns"] > end]
        check(not outside, "window %d [%d, %d]: %d API calls outside it, e.g. %s" % (n, start, end, len(outside),
                                                                                 outside[:1]))
        # GPU work: what ran in the window (a kernel queued just before it may end inside it).
        slack = 200 * 10**6
        late = [r for r in acts if r["start_ns"] < start - slack or r["end_ns"] > end + slack]
        check(not late, "window %d: %d activities outside it, e.g. %s" % (n, len(late), late[:1]))
        p = subprocess.run([args.gsanalyze, "report", trace], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=120)
        report = p.stdout.decode(errors="replace")
        # The staging buffer was pinned while the agent was dormant: the window must still know it.
        # (Only where the interposers see the allocation: the Python workload calls the runtime
        # through a ctypes handle, which only CUPTI sees, and CUPTI is off while dormant.)
        if not args.workload.endswith(".py"):
            check("pageable copy" not in report, "window %d: pinned copies reported as pageable:\n%s" % (n, report))
        check(p.returncode == 0 and "load_batch" in report,
              "window %d: gsanalyze report rc=%d, no load_batch in:\n%s\n%s" % (n, p.returncode, report[-2000:],
                                                                             p.stderr.decode()[-1000:]))


def case_periodic(args):
    """gsrun --every/--window (GS_PERIODIC_MS): windows open by themselves, the first at the start;
    each is a complete trace of its own time only, the process is dormant between them (gsctl
    says standby), and the window open at the exit is written then."""
    c = Case(args, "periodic")
    period_ms, window_ms = 1000, 300
    # ~3.2 s of steps (one every ~20 ms): windows at 0, 1 and 2 s, and at 3 s the one the exit ends.
    c.start_workload(steps=160, mode=("--every", str(period_ms), "--window", str(window_ms)))
    standby_seen = False
    try:
        if not c.wait_listening():
            return
        # Asked for its state while it runs, the process must be in standby at least once.
        deadline = time.monotonic() + 100
        while c.proc.poll() is None and time.monotonic() < deadline:
            rc, out, err = c.gsctl("status", "--pid", str(c.proc.pid))
            standby_seen = standby_seen or (rc == 0 and "standby" in out)
            time.sleep(0.05)
        rc = c.proc.wait(timeout=20)
        check(rc == 0, "the workload exited %s; stderr: %s" % (rc, c.stderr()))
    finally:
        c.kill()
    check(standby_seen, "gsctl never saw the process dormant between windows")
    check(len(c.trace_files()) >= 3, "fewer than three windows in ~3 s: %s; stderr: %s" % (c.trace_files(), c.stderr()))
    files = c.trace_files()
    base = os.path.join(c.traces, "%s-rnorank-%d" % (os.uname().nodename, c.proc.pid))
    expected = [base + ".window-%d.gstrace" % n for n in range(1, len(files) + 1)]
    if not check(files == expected, "trace files %s, expected %s" % (files, expected)):
        return
    spans = []
    for n, trace in enumerate(files, 1):
        records = c.dump(trace)
        api = [r for r in records if r["type"] == "api"]
        ends = [r for r in records if r["type"] == "end"]
        check(ends and ends[0]["clean_end"] and ends[0]["damage"] == 0,
              "window %d: not a complete trace: %s" % (n, ends))
        if not check(len(api) > 5, "window %d: %d API calls" % (n, len(api))):
            continue
        first, last = min(r["enter_ns"] for r in api), max(r["exit_ns"] for r in api)
        spans.append((first, last))
        # Its own window only: a window's calls span its length (the exit's window less), give or
        # take the listener's wake-up and the window's stop on a loaded machine.
        slack_ms = 100
        check(last - first <= (window_ms + slack_ms) * 10**6,
              "window %d: API calls over %.0f ms" % (n, (last - first) / 1e6))
    # Dormant between: from one window's last call to the next one's first, the period less the
    # window (the next start comes a period after the last, never early), less that slack.
    for n in range(1, len(spans)):
        gap = spans[n][0] - spans[n - 1][1]
        check(gap >= (period_ms - window_ms - slack_ms) * 10**6,
              "windows %d and %d only %.0f ms apart" % (n, n + 1, gap / 1e6))
    for n, trace in enumerate(files, 1):
        p = subprocess.run([args.gsanalyze, "report", trace], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=120)
        report = p.stdout.decode(errors="replace")
        check(p.returncode == 0 and "load_batch" in report,
              "window %d: gsanalyze report rc=%d: %s" % (n, p.returncode, report[-2000:]))


def case_periodic_window_starts(args):
    """A launch every few microseconds while windows open: no window holds GPU work from before it
    (whose launch it never saw), which its report would count as gaps without a host call."""
    workload = os.path.join(args.build_dir, "tests", "workloads", "workload_launch_bound")
    if not os.access(workload, os.X_OK):
        print("skipped: no %s (built with the CUDA workloads)" % workload)
        sys.exit(SKIP)
    c = Case(args, "periodic_window_starts")
    cmd = [args.gsrun, "--every", "400", "--window", "100", "-q", "-o", c.traces + "/", "--", workload,
           "--steps", "1500"]
    p = subprocess.run(cmd, env=c.environ(), cwd=c.dir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       timeout=120)
    check(p.returncode == 0, "the loop exited %d: %s" % (p.returncode, p.stderr.decode(errors="replace")[-2000:]))
    files = c.trace_files()
    check(len(files) >= 3, "windows: %s" % files)
    for trace in files:
        p = subprocess.run([args.gsanalyze, "report", trace], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=120)
        report = p.stdout.decode(errors="replace")
        check(p.returncode == 0 and "launch overhead" in report and "without a host call" not in report,
              "%s: gsanalyze report rc=%d:\n%s" % (os.path.basename(trace), p.returncode, report[:1500]))


def case_dormant_exit(args):
    """No window ever: the workload's result is unchanged, no file is written, the socket goes at exit."""
    c = Case(args, "dormant_exit")
    c.start_workload(steps=40)
    try:
        c.wait_listening()
        rc = c.proc.wait(timeout=120)
    finally:
        c.kill()
    check(rc == 0, "the workload exited %s under --on-demand; stderr: %s" % (rc, c.stderr()))
    check(c.trace_files() == [], "files written with no window: %s" % c.trace_files())
    check(not os.path.exists(c.socket_path()), "socket left behind after a normal exit")
    check("gpustall:" not in c.stderr(), "agent messages in a dormant run: %s" % c.stderr())
    rc, out, err = c.gsctl("list")
    check(rc == 0 and "no process" in out and "stale" not in err, "gsctl list after exit: %r %r" % (out, err))


def case_other_user(args):
    """Another uid that reaches the socket (the folder opened up on purpose) is refused by the
    agent's SO_PEERCRED check: no window starts."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        print("skipped: needs root and setpriv (the server-side check is unit-tested: "
              "ondemand.ControlSocketTest.AnotherUidIsRefusedBeforeAnythingRuns)")
        sys.exit(SKIP)
    # The other uid must reach gsctl and the socket: neither may sit under a folder it cannot
    # traverse, such as a checkout in a private (0700) home folder. Both go to a fresh folder
    # under the system's temporary folder, opened to others on purpose.
    public = tempfile.mkdtemp(prefix="gpustall-ondemand-other-user-")
    os.chmod(public, 0o711)
    c = Case(args, "other_user", work_dir=public)
    # gsctl is a thin wrapper of the front end's package (tools/frontend/gpustall), found beside it.
    tools = os.path.dirname(os.path.realpath(args.gsctl))
    c.gsctl_path = os.path.join(public, "gsctl")
    shutil.copy(args.gsctl, c.gsctl_path)
    shutil.copytree(os.path.join(tools, "frontend", "gpustall"), os.path.join(public, "frontend", "gpustall"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    os.chmod(c.gsctl_path, 0o755)
    for folder, _, files in os.walk(os.path.join(public, "frontend")):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o755)
    c.start_workload()
    try:
        if not c.wait_listening():
            return
        # Past the first line of defence on purpose: the folder traversable, the socket writable.
        for path in (c.dir, c.runtime_dir, c.run_folder):
            os.chmod(path, 0o711)
        os.chmod(c.socket_path(), 0o666)
        other = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        rc, out, err = c.gsctl("start", "--socket", c.socket_path(), prefix=other)
        check(rc != 0 and "permission denied: uid 65534 may not control this process" in err,
              "another uid's start: rc=%d out=%r err=%r" % (rc, out, err))
        rc, out, err = c.gsctl("status", "--socket", c.socket_path(), prefix=other)
        check(rc != 0 and "permission denied" in err, "another uid's status: rc=%d out=%r err=%r" % (rc, out, err))
        # gsctl itself refuses the opened-up folder for the owner: put it back first.
        os.chmod(c.run_folder, 0o700)
        rc, out, err = c.gsctl("status", "--pid", str(c.proc.pid))
        check(rc == 0 and "standby, 0 window(s)" in out, "owner's status after the refusals: %r %r" % (out, err))
        check(c.trace_files() == [], "a refused start wrote files: %s" % c.trace_files())
    finally:
        c.kill()
        shutil.rmtree(public, ignore_errors=True)


def case_bad_run_folder(args):
    """A run folder with the wrong mode, or a symlink, is refused with one line; the job goes on."""
    for kind in ("mode", "symlink", "owner"):
        c = Case(args, "bad_run_folder_" + kind)
        if kind == "mode":
            os.mkdir(c.run_folder, 0o755)
            os.chmod(c.run_folder, 0o755)
            expect = "has mode 0755, expected 0700"
        elif kind == "symlink":
            target = os.path.join(c.dir, "elsewhere")
            os.mkdir(target, 0o700)
            os.symlink(target, c.run_folder)
            expect = "is a symbolic link"
        else:
            if os.geteuid() != 0:
                continue  # cannot give a folder away without root
            os.mkdir(c.run_folder, 0o700)
            os.chown(c.run_folder, 65534, 65534)
            expect = "is owned by uid 65534"
        c.start_workload(steps=10)
        try:
            rc = c.proc.wait(timeout=120)
        finally:
            c.kill()
        err = c.stderr()
        lines = [line for line in err.splitlines() if line.startswith("gpustall:")]
        check(rc == 0, "%s: the workload exited %s; stderr: %s" % (kind, rc, err))
        check(len(lines) == 1 and expect in lines[0] and "on-demand capture unavailable" in lines[0],
              "%s: expected one gpustall line saying %r, got %s" % (kind, expect, lines))
        check(c.trace_files() == [], "%s: files written: %s" % (kind, c.trace_files()))
        if kind == "symlink":
            check(os.listdir(os.path.join(c.dir, "elsewhere")) == [], "a socket went through the symlink")
        rc, out, err = c.gsctl("list")
        check(rc == 2 and expect in err, "%s: gsctl list must refuse the folder too: %r %r" % (kind, out, err))


FORK_PROGRAM = r"""
import ctypes, os, sys, time
sys.path.insert(0, sys.argv[1])
import cudart
cudart.load()                                # simgpu's runtime, loaded
# Through the global symbol table, i.e. through the preloaded agent's wrapper (ctypes' handle of
# libcudart would bypass LD_PRELOAD).
cuda = ctypes.CDLL(None)
cuda.cudaDeviceSynchronize()                 # the parent activates: its socket appears
folder, parent = sys.argv[2], os.getpid()
child = os.fork()
if child == 0:
    time.sleep(0.3)
    print("child-before-cuda", os.path.exists("%s/%d.sock" % (folder, os.getpid())), flush=True)
    # The child's first CUDA call (refused by CUDA in a child forked after init, as a real driver
    # does, but it reaches the agent): its own socket.
    cuda.cudaDeviceSynchronize()
    print("child-after-cuda", os.path.exists("%s/%d.sock" % (folder, os.getpid())), flush=True)
    sys.exit(0)                              # atexit runs in the child: must not touch the parent's
_, status = os.waitpid(child, 0)
print("child-status", status, flush=True)
print("child-socket-after-exit", os.path.exists("%s/%d.sock" % (folder, child)), flush=True)
print("parent-socket", os.path.exists("%s/%d.sock" % (folder, parent)), flush=True)
"""


def case_fork(args):
    """A forked child has no listener until it uses CUDA itself, then its own socket; neither
    removes the other's."""
    c = Case(args, "fork")
    python = args.python
    if not python:
        print("skipped: no Python interpreter for the ctypes program")
        sys.exit(SKIP)
    agent = os.path.join(args.build_dir, "lib", "libgsagent.so")
    env = c.environ({"LD_PRELOAD": agent, "GS_ON_DEMAND": "1", "GS_OUTPUT": c.traces + "/"})
    p = subprocess.run([python, "-c", FORK_PROGRAM, args.workloads_py, c.run_folder], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    out = p.stdout.decode(errors="replace")
    check(p.returncode == 0, "fork program exited %d: %s %s" % (p.returncode, out, p.stderr.decode()[-2000:]))
    for line in ("child-before-cuda False", "child-after-cuda True", "child-status 0",
                 "child-socket-after-exit False", "parent-socket True"):
        check(line in out, "expected %r in:\n%s" % (line, out))
    check(os.listdir(c.run_folder) == [], "sockets left after both exited: %s" % os.listdir(c.run_folder))
    check(c.trace_files() == [], "files written with no window: %s" % c.trace_files())


def case_gsctl_errors(args):
    """Clear errors, no workload: nothing listening, unknown pid, bad duration, bad folder."""
    c = Case(args, "gsctl_errors")
    rc, out, err = c.gsctl("list")
    check(rc == 0 and "no process of this user is listening" in out, "list with no folder: %r %r" % (out, err))
    rc, out, err = c.gsctl("start")
    check(rc == 2 and "no process of this user is listening" in err, "start with nobody: %r %r" % (out, err))
    os.mkdir(c.run_folder, 0o700)
    rc, out, err = c.gsctl("stop", "--pid", "999999999")
    check(rc == 2 and "process 999999999 is not listening" in err, "stop --pid unknown: %r %r" % (out, err))
    rc, out, err = c.gsctl("start", "--duration", "soon")
    check(rc == 2 and "'soon' is not a duration" in err, "bad duration: %r %r" % (out, err))
    rc, out, err = c.gsctl("start", "--duration", "25h")
    check(rc == 2 and "at most 24h" in err, "too long a duration: %r %r" % (out, err))
    rc, out, err = c.gsctl("start", "--pid", "1", "--job", "x")
    check(rc == 2 and "not allowed with" in err, "--pid with --job: %r %r" % (out, err))
    os.chmod(c.run_folder, 0o777)
    rc, out, err = c.gsctl("list")
    check(rc == 2 and "has mode 0777, expected 0700" in err, "a world-writable folder: %r %r" % (out, err))


def case_gsctl_stale_socket(args):
    """Sockets of processes that died without cleaning up (SIGKILL) are removed by gsctl list;
    a live process's socket with nobody listening (pid reused) too."""
    c = Case(args, "gsctl_stale_socket")
    os.mkdir(c.run_folder, 0o700)
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = os.path.join(c.run_folder, "%d.sock" % dead.pid)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(stale)
    s.close()  # the file stays, nobody listens
    reused = os.path.join(c.run_folder, "%d.sock" % os.getpid())  # alive, but not listening
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(reused)
    s.close()
    rc, out, err = c.gsctl("list")
    check(rc == 0 and "no process of this user is listening" in out, "list: %r %r" % (out, err))
    check("removed the stale socket of process %d" % dead.pid in err, "dead pid not reported: %r" % err)
    check(not os.path.exists(stale) and not os.path.exists(reused), "stale sockets remain: %s" % os.listdir(c.run_folder))


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("case", choices=sorted(CASES))
    for opt in ("--gsrun", "--gsctl", "--build-dir", "--simgpu-lib", "--workload", "--gsanalyze", "--dump",
                "--work-dir"):
        parser.add_argument(opt, required=True)
    parser.add_argument("--python", help="interpreter for the fork case (ctypes on simgpu)")
    parser.add_argument("--workloads-py", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                                "workloads", "py"))
    args = parser.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    CASES[args.case](args)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
