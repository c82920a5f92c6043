#!/usr/bin/env python3
"""reliability.py -- one reliability case of libgsagent.so inside a job (ctest runs one per test).

    reliability.py CASE --agent libgsagent.so --simgpu-lib DIR --app gs_reliability_app
                   --summary gs_reliability_trace_summary --gsanalyze gsanalyze
                   --config-doc gs_config_doc --work-dir DIR [--py-dir DIR --python PY]

Every case runs the program twice, without and with the agent (LD_PRELOAD, simgpu), and checks
that the exit status, stdout and stderr (less the agent's `gpustall:` lines) are the same, and
that every trace the agent left is readable (the reader, `gsanalyze dump`, `gsanalyze report`).

Cases (what each adds to that):
  fork_continue      fork without exec while CUDA is in use; the parent goes on with CUDA after the
                     fork: its trace ends cleanly and holds the steps from both sides of the fork.
  abort              SIGABRT: the trace holds every chunk written before, no end record.
  underscore_exit    _exit(): same (no atexit handlers run).
  sigterm_default    SIGTERM with the default disposition. The agent installs no signal handler
                     (it must not change the application's dispositions), so the process ends
                     as with SIGKILL: no end record; the loss is bounded like SIGKILL's.
  sigterm_handled    the application handles SIGTERM and returns from main: the end record is there.
  sigkill            SIGKILL: the trace is readable up to its last complete chunk; what is lost is
                     the time since the last flush. Measured against the kill time for GS_FLUSH_MS
                     100 and 20; asserted <= GS_FLUSH_MS + 10 ms (ring drain) + a generous margin
                     for a loaded machine, and printed.
  threads16          waves of 16 threads created at once, each with its own stream, each exiting
                     after its steps: every launch is in the trace (or counted as dropped).
  py_os_exit         a Python job ending with os._exit().
  py_workers_fork,   a Python job with a DataLoader-style multiprocessing Pool (fork / spawn start
  py_workers_spawn   method): one trace (the main process's), complete; the workers write none.
  unwritable_output  GS_OUTPUT in a folder that cannot be written (read-only file system; a path
                     through a regular file): one `gpustall:` line, no trace, the job goes on.
  disk_full          GS_OUTPUT on a tiny tmpfs (a private mount namespace; needs root or
                     CAP_SYS_ADMIN, else SKIP): one `gpustall:` line once it fills, the job goes on,
                     what was written is readable.
  file_size_limit    RLIMIT_FSIZE below the trace's size, SIGXFSZ left at its default (fatal): the
                     agent must stop writing before the limit rather than kill the job.
  bad_settings       every GS_* setting (from gs_config_doc's table) with bad values: exactly one
                     `gpustall:` line naming the variable, no trace, the job unaffected.
  security           no setting makes the agent write outside its output location or load code
                     other than the CUPTI library it was given: GS_OUTPUT with '..', through a
                     symlink (existing and dangling), over-long values, a relative
                     GS_CUPTI_LIBRARY -> refused with one message; and, under strace (SKIP if
                     absent), every file the agent writes is in the output folder and every
                     file it maps executable is itself or the CUPTI library it was told.
  flood              4 threads launching empty kernels as fast as simgpu allows, GS_BUFFER_MB=4:
                     the trace's memory high-water mark is within its bound, process RSS grows by
                     at most the bound + a fixed allowance, every launch is recorded or counted
                     dropped (exactly), and the application's loop rate with/without the agent is
                     printed (a ratio, not asserted).

Tested elsewhere (not repeated here): exec (e2e.exec), fork before CUDA and fork after CUDA with a
child that exits (e2e.fork), a process without CUDA (e2e.no_cuda), 8 threads at once against the
truth (e2e.threads), two bad values and output unchanged (e2e.output_unchanged), an uncreatable
output and a write error while recording at unit level (agent.AgentLifecycleTest.*), trace files
0600 and O_EXCL (agent output_path/trace_file tests), the reader on files cut at every byte
(trace.* reader tests).
Exit status 0 = pass, 1 = a check failed, 77 = skipped (the reason is printed).
"""
import argparse
import glob
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testlib"))
from gstest import FAILURES, check, exit_status, fail  # noqa: E402  (tests/testlib)

SKIP = 77
PLANTED = "reliability_planted_step"


class Skip(Exception):
    pass


class Case:
    """A work folder for one case and the ways to run the app in it."""

    def __init__(self, args, name):
        self.args = args
        self.dir = os.path.join(args.work_dir, name)
        shutil.rmtree(self.dir, ignore_errors=True)
        self.out = os.path.join(self.dir, "out")
        os.makedirs(self.out)

    def environ(self, agent=True, extra=None, output=None):
        env = dict(os.environ)
        for k in list(env):
            if k.startswith(("GS_", "SIMGPU_")) or k in ("LD_PRELOAD", "CUDA_INJECTION64_PATH"):
                del env[k]
        env["LD_LIBRARY_PATH"] = self.args.simgpu_lib
        env["GS_OUTPUT"] = output or (self.out + "/")
        if agent:
            env["LD_PRELOAD"] = self.args.agent
        env.update(extra or {})
        return env

    def run(self, cmd, agent=True, extra=None, output=None, timeout=120, **kw):
        t0 = time.monotonic()
        p = subprocess.run(cmd, env=self.environ(agent, extra, output), capture_output=True,
                           text=True, timeout=timeout, **kw)
        p.seconds = time.monotonic() - t0
        p.end_ns = time.monotonic_ns()  # when it was reaped (CLOCK_MONOTONIC, the trace's clock)
        return p

    def traces(self, folder=None):
        return sorted(glob.glob(os.path.join(folder or self.out, "*.gstrace")))


def gpustall_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith("gpustall:")]


def without_gpustall(stderr):
    return "\n".join(l for l in stderr.splitlines() if not l.startswith("gpustall:"))


def check_unchanged(label, base, with_agent, messages=0):
    """Exit status, stdout and stderr (less gpustall: lines) equal; `messages` gpustall: lines."""
    check(with_agent.returncode == base.returncode,
          "%s: exit status %d with the agent, %d without" % (label, with_agent.returncode, base.returncode))
    check(with_agent.stdout == base.stdout,
          "%s: stdout differs:\n  with:    %r\n  without: %r" % (label, with_agent.stdout[-300:], base.stdout[-300:]))
    check(without_gpustall(with_agent.stderr) == without_gpustall(base.stderr),
          "%s: stderr differs: %r vs %r" % (label, with_agent.stderr[-500:], base.stderr[-500:]))
    lines = gpustall_lines(with_agent.stderr)
    if messages is not None:
        check(len(lines) == messages, "%s: expected %d gpustall: line(s), got %r" % (label, messages, lines))
    return lines


def summary(args, path, planted=PLANTED):
    p = subprocess.run([args.summary, path, planted], capture_output=True, text=True, timeout=120)
    if not check(p.returncode == 0, "%s unreadable: %s" % (path, p.stderr.strip())):
        return None
    return json.loads(p.stdout)


def check_readable(args, path, expect_clean=None, min_api=1):
    """The reader, gsanalyze dump and gsanalyze report all read `path`. Returns its summary."""
    s = summary(args, path)
    if s is None:
        return None
    for sub in ("dump", "report"):
        p = subprocess.run([args.gsanalyze, sub, path], capture_output=True, text=True, timeout=120)
        check(p.returncode == 0 and p.stdout,
              "gsanalyze %s %s: exit %d, %s" % (sub, os.path.basename(path), p.returncode, p.stderr.strip()[-300:]))
    check(s["damage"] == 0 or s["truncated_bytes"] > 0,
          "%s: damage inside the file (not only a cut end): %r" % (path, s))
    check(s["api_calls"] >= min_api, "%s: %d API calls, expected at least %d" % (path, s["api_calls"], min_api))
    if expect_clean is not None:
        check(s["clean_end"] == expect_clean,
              "%s: clean_end %s, expected %s" % (path, s["clean_end"], expect_clean))
    print("  %s: %d chunks, %d API calls, %d activities, clean_end %s, truncated %d bytes" % (
        os.path.basename(path), s["chunks"], s["api_calls"], s["activities"], s["clean_end"],
        s["truncated_bytes"]))
    return s


def only_trace(case, folder=None):
    traces = case.traces(folder)
    if not check(len(traces) == 1, "expected one trace, found %s" % traces):
        return None
    return traces[0]


# ---- process lifecycle ---------------------------------------------------------------------------

def case_fork_continue(args):
    c = Case(args, "fork_continue")
    cmd = [args.app, "fork-continue", "40"]
    base, run = c.run(cmd, agent=False), c.run(cmd)
    check_unchanged("fork-continue", base, run)
    traces = c.traces()
    summaries = {t: summary(args, t) for t in traces}
    full = [t for t, s in summaries.items() if s and s["calls_by_function"].get("cudaLaunchKernel", 0) == 80]
    if check(len(full) == 1, "expected one trace with the parent's 80 launches (40 before the fork, 40 after); "
             "launches per trace: %r" % {os.path.basename(t): s and s["calls_by_function"].get("cudaLaunchKernel")
                                         for t, s in summaries.items()}):
        s = check_readable(args, full[0], expect_clean=True)
        if s:
            check(s["planted_calls"] == s["api_calls"] - s["calls_by_function"].get("cudaStreamCreate", 0)
                  - s["calls_by_function"].get("cudaStreamDestroy", 0) - s["calls_by_function"].get("cudaMalloc", 0)
                  - s["calls_by_function"].get("cudaMallocHost", 0) - s["calls_by_function"].get("cudaFree", 0)
                  - s["calls_by_function"].get("cudaFreeHost", 0),
                  "calls of the steps whose stack does not name %s: %r" % (PLANTED, s))
    for t in traces:
        if t not in full:  # the child's, if it left one: readable, without CUDA calls of its own
            check_readable(args, t, min_api=0)


def killed_run(c, args, mode, sig, flush_ms, agent=True, delay=0.3):
    """Starts the app in `mode`, waits for 'ready' + `delay` s, sends `sig`. Returns
    (returncode, stdout, stderr, kill time in CLOCK_MONOTONIC ns)."""
    env = c.environ(agent, {"GS_FLUSH_MS": str(flush_ms)})
    p = subprocess.Popen([args.app, mode], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = p.stdout.readline()
    time.sleep(delay)
    kill_ns = time.monotonic_ns()
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    return p.returncode, first + out, err, kill_ns


class Result:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def check_killed(args, name, mode, sig, flush_values, expect_clean=False, trials=3):
    """Kills the app `trials` times per GS_FLUSH_MS value, at different moments, and measures how
    far before the signal each trace ends (the loss)."""
    for flush_ms in flush_values:
        losses = []
        base = None
        for trial in range(trials):
            c = Case(args, "%s_%d_%d" % (name, flush_ms, trial))
            delay = 0.2 + 0.37 * trial / max(trials - 1, 1)  # spread over a few flush periods
            if base is None:
                base = Result(*killed_run(c, args, mode, sig, flush_ms, agent=False)[:3])
            a = killed_run(c, args, mode, sig, flush_ms, delay=delay)
            check_unchanged("%s (GS_FLUSH_MS=%d)" % (name, flush_ms), base, Result(*a[:3]))
            path = only_trace(c)
            if path is None:
                continue
            s = check_readable(args, path, expect_clean=expect_clean)
            if s is None or expect_clean:
                continue
            losses.append((a[3] - s["last_ns"]) / 1e6)
        if not losses:
            continue
        # Rings are drained every 10 ms and a chunk is written every GS_FLUSH_MS: a kill loses at
        # most about GS_FLUSH_MS + 10 ms of records. 250 ms of margin: a loaded 2-core machine may
        # delay the writer thread (the figures printed are what counts).
        bound = flush_ms + 10 + 250
        check(all(0 <= x <= bound for x in losses),
              "%s: the trace ends %s ms before the signal (GS_FLUSH_MS=%d; bound %d ms)" % (
                  name, ["%.1f" % x for x in losses], flush_ms, bound))
        print("LOSS %s: GS_FLUSH_MS=%d -> over %d kills the trace ends %s ms before the signal "
              "(max %.1f ms)" % (name, flush_ms, len(losses), ", ".join("%.1f" % x for x in losses), max(losses)))


def case_sigkill(args):
    check_killed(args, "sigkill", "spin", signal.SIGKILL, (100, 20))


def case_sigterm_default(args):
    check_killed(args, "sigterm_default", "spin", signal.SIGTERM, (100,))


def case_sigterm_handled(args):
    check_killed(args, "sigterm_handled", "sigterm-exits", signal.SIGTERM, (100,), expect_clean=True)


def check_ends_early(args, name, cmd, expect_status, flush_ms=100):
    """A process that ends without atexit handlers: the trace holds what the periodic flushes
    wrote; the last record is at most about GS_FLUSH_MS + 10 ms older than the process's end."""
    c = Case(args, name)
    extra = {"GS_FLUSH_MS": str(flush_ms)}
    base = c.run(cmd, agent=False)
    run = c.run(cmd, extra=extra)
    check(base.returncode == expect_status, "%s: baseline exit status %d, expected %d (%s)" % (
        name, base.returncode, expect_status, base.stderr[-300:]))
    check_unchanged(name, base, run)
    path = only_trace(c)
    s = path and check_readable(args, path, expect_clean=False)
    if s:
        # run.end_ns is when the process was reaped, after its end: an upper bound of the loss.
        loss_ms = (run.end_ns - s["last_ns"]) / 1e6
        bound = flush_ms + 10 + 250
        check(loss_ms <= bound, "%s: the trace ends %.0f ms before the process did (bound %d ms)" % (name, loss_ms, bound))
        print("LOSS %s: GS_FLUSH_MS=%d -> the trace ends %.1f ms before the process was reaped (run %.0f ms)" % (
            name, flush_ms, loss_ms, run.seconds * 1e3))


def case_abort(args):
    check_ends_early(args, "abort", [args.app, "abort", "600"], -signal.SIGABRT)


def case_underscore_exit(args):
    check_ends_early(args, "underscore_exit", [args.app, "_exit", "600"], 5)


def case_py_os_exit(args):
    check_ends_early(args, "py_os_exit", [args.python, py_job(), "--py-dir", args.py_dir, "os-exit"], 7, flush_ms=20)


def case_threads16(args):
    c = Case(args, "threads16")
    waves, threads, steps = 3, 16, 5
    cmd = [args.app, "threads", str(waves), str(threads), str(steps)]
    base, run = c.run(cmd, agent=False), c.run(cmd)
    check_unchanged("threads16", base, run)
    path = only_trace(c)
    s = path and check_readable(args, path, expect_clean=True)
    if s:
        launches = s["calls_by_function"].get("cudaLaunchKernel", 0)
        dropped = s["stats"]["ring_dropped"]
        check(launches + dropped >= waves * threads * steps and launches <= waves * threads * steps,
              "%d launches in the trace + %d dropped, expected %d" % (launches, dropped, waves * threads * steps))
        check(s["threads"] >= threads, "calls from %d threads, expected at least %d" % (s["threads"], threads))
        print("  %d launches recorded of %d, %d dropped, %d threads" % (launches, waves * threads * steps, dropped, s["threads"]))


def py_job():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "py_job.py")


def case_py_workers(args, method):
    c = Case(args, "py_workers_" + method)
    cmd = [args.python, py_job(), "--py-dir", args.py_dir, "workers-" + method]
    base, run = c.run(cmd, agent=False), c.run(cmd)
    check(base.returncode == 0, "baseline failed: %s" % base.stderr[-500:])
    check_unchanged("py workers (%s)" % method, base, run)
    path = only_trace(c)  # the main process's; the workers never touch CUDA
    s = path and check_readable(args, path, expect_clean=True)
    if s:
        check(s["calls_by_function"].get("cudaLaunchKernel", 0) == 8,
              "expected the 8 launches of the main process: %r" % s["calls_by_function"])


# ---- output problems -----------------------------------------------------------------------------

def mount_namespace_available():
    if shutil.which("unshare") is None:
        return False
    p = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
                       capture_output=True)
    return p.returncode == 0


def in_tmpfs(folder, options, cmd, copy_to=None):
    """cmd run in a private mount namespace where `folder` is a fresh tmpfs mounted with
    `options`; its *.gstrace files are copied to `copy_to` afterwards (the mount dies with the
    namespace). The exit status is cmd's."""
    script = ('mount -t tmpfs -o "$1" tmpfs "$2" || exit 99; folder=$2; dest=$3; shift 3; "$@"; rc=$?; '
              '[ -n "$dest" ] && cp "$folder"/*.gstrace "$dest"/ 2>/dev/null; exit $rc')
    return ["unshare", "-m", "sh", "-c", script, "sh", options, folder, copy_to or ""] + cmd


def case_unwritable_output(args):
    c = Case(args, "unwritable")
    cmd = [args.app, "steps", "20"]
    base = c.run(cmd, agent=False)
    # A path through a regular file (ENOTDIR): unwritable for anyone, root included.
    blocker = os.path.join(c.dir, "a_file")
    open(blocker, "w").close()
    run = c.run(cmd, output=blocker + "/traces/")
    lines = check_unchanged("output under a regular file", base, run, messages=1)
    check(not glob.glob(os.path.join(c.dir, "**", "*.gstrace"), recursive=True), "a trace was written somewhere")
    print("  message: %r" % lines)
    # A read-only folder: permissions when not root, a read-only file system when root (root
    # ignores permissions).
    ro = os.path.join(c.dir, "readonly")
    os.makedirs(ro)
    if os.geteuid() != 0:
        os.chmod(ro, 0o500)
        run = c.run(cmd, output=ro + "/")
    elif mount_namespace_available():
        run = c.run(in_tmpfs(ro, "ro,size=64k", cmd), output=ro + "/")
    else:
        print("SKIP (part): running as root without a mount namespace: no read-only folder to test")
        return
    lines = check_unchanged("read-only output folder", base, run, messages=1)
    print("  message: %r" % lines)


def case_disk_full(args):
    if os.geteuid() != 0 or not mount_namespace_available():
        raise Skip("needs a private mount namespace to mount a small tmpfs (root or CAP_SYS_ADMIN)")
    c = Case(args, "disk_full")
    full = os.path.join(c.dir, "small_disk")
    saved = os.path.join(c.dir, "saved")
    os.makedirs(full)
    os.makedirs(saved)
    cmd = [args.app, "steps", "1500"]
    base = c.run(cmd, agent=False)
    # 32 KiB: the header and the first chunks fit, the recording does not.
    run = c.run(in_tmpfs(full, "size=32k", cmd, copy_to=saved), output=full + "/", extra={"GS_FLUSH_MS": "20"})
    check(run.returncode != 99, "could not mount the tmpfs: %s" % run.stderr)
    lines = check_unchanged("disk full", base, run, messages=1)
    print("  message: %r" % lines)
    check(any("space" in l.lower() or "full" in l.lower() for l in lines),
          "the message does not say the disk is full: %r" % lines)
    path = only_trace(c, saved)
    if path:
        s = check_readable(args, path, min_api=1)
        if s:
            check(os.path.getsize(path) <= 32 * 1024, "the trace is larger than the disk")


def case_file_size_limit(args):
    """RLIMIT_FSIZE below the trace's size with SIGXFSZ at its default action (terminate)."""
    c = Case(args, "file_size_limit")
    limit = 32 * 1024

    def limited(size):
        def apply():
            resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
            signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # Python ignores it; a C job would not
        return apply

    # A long job: the writer thread (all signals blocked) hits the limit; it gets EFBIG, disables.
    cmd = [args.app, "steps", "1500"]
    base = c.run(cmd, agent=False, preexec_fn=limited(limit))
    run = c.run(cmd, preexec_fn=limited(limit), extra={"GS_FLUSH_MS": "20"})
    lines = check_unchanged("file size limit, long job", base, run, messages=1)
    print("  message: %r" % lines)
    path = only_trace(c)
    if path:
        check_readable(args, path)
        check(os.path.getsize(path) <= limit, "the trace is larger than RLIMIT_FSIZE")
    # A short job: everything is written by the final flush at exit, on the application's own
    # thread, where SIGXFSZ is not blocked: the agent must refuse the write, not let the kernel
    # kill the job for it (agent/writer/trace_file.cc checks RLIMIT_FSIZE before each write).
    shutil.rmtree(c.out)
    os.makedirs(c.out)
    cmd = [args.app, "steps", "5"]
    base = c.run(cmd, agent=False, preexec_fn=limited(1024))
    run = c.run(cmd, preexec_fn=limited(1024))
    check_unchanged("file size limit, short job (final flush at exit)", base, run, messages=1)


# ---- settings ------------------------------------------------------------------------------------

def settings_table(args):
    """(variable, default, accepted) rows of gs_config_doc's table."""
    out = subprocess.run([args.config_doc], capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        cells = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].startswith("`GS_"):
            rows.append((cells[0].strip("`"), cells[1], cells[2]))
    return rows


def bad_values(variable, accepted):
    """Values a user might mistype, by the kind of the setting (from the table's 'accepted')."""
    long_value = "x" * 5000
    m = re.match(r"^(-?\d+)\D+(-?\d+)$", accepted)
    if m:
        lo, hi = int(m.group(1)), int(m.group(2))
        return ["banana", str(lo - 1), str(hi + 1), "12abc", "99999999999999999999", long_value]
    if accepted.startswith("`1`/`0`"):
        return ["maybe", "2", long_value]
    if "pattern" in accepted:
        return ["trace-%q.gstrace", "trace-%", "a/../b/", "bad\nname", long_value]
    if accepted.startswith("`"):  # an enum: `a`, `b`, ...
        return ["sometimes", accepted.split(",")[0].strip("` ").upper() + "X", long_value]
    if variable == "GS_CUPTI_LIBRARY":
        return ["libcupti.so.13", "../lib/libcupti.so.13", long_value]
    return [long_value]


def case_bad_settings(args):
    c = Case(args, "bad_settings")
    cmd = [args.app, "steps", "5"]
    base = c.run(cmd, agent=False)
    rows = settings_table(args)
    check(len(rows) >= 10, "gs_config_doc listed %d settings" % len(rows))
    tried = 0
    for variable, _default, accepted in rows:
        for value in bad_values(variable, accepted):
            shutil.rmtree(c.out)
            os.makedirs(c.out)
            extra = {variable: value}
            output = value if variable == "GS_OUTPUT" else None
            run = c.run(cmd, extra=extra, output=output)
            label = "%s=%r" % (variable, value[:40])
            lines = check_unchanged(label, base, run, messages=1)
            check(len(lines) == 1 and variable in lines[0], "%s: the message does not name the variable: %r" % (label, lines))
            check(not c.traces(), "%s: a trace was written although the setting is bad" % label)
            tried += 1
    print("  %d bad values of %d settings: each one message, job unchanged" % (tried, len(rows)))


# ---- security ------------------------------------------------------------------------------------

def refused(c, label, cmd, base, extra=None, output=None):
    run = c.run(cmd, extra=extra, output=output)
    lines = check_unchanged(label, base, run, messages=1)
    print("  %s -> %r" % (label, lines))
    return run


def case_security(args):
    c = Case(args, "security")
    cmd = [args.app, "steps", "5"]
    base = c.run(cmd, agent=False)
    outside = os.path.join(c.dir, "outside")
    os.makedirs(outside)
    # '..' in the output location: refused, nothing written anywhere.
    refused(c, "GS_OUTPUT with ..", cmd, base, output=c.out + "/../outside/")
    check(not os.listdir(outside), "a file appeared outside the output folder: %s" % os.listdir(outside))
    # A symlink where the trace file would go, to an existing file and to a file that does not
    # exist yet: O_EXCL never follows it; the agent writes the next free name beside it
    # (t.1.gstrace), in the output folder, and the symlink's target is untouched.
    victim = os.path.join(outside, "victim")
    with open(victim, "w") as f:
        f.write("precious\n")
    link = os.path.join(c.out, "t.gstrace")
    for label, target in (("a symlink to a file", victim), ("a dangling symlink", os.path.join(outside, "new.gstrace"))):
        os.symlink(target, link)
        run = c.run(cmd, output=link)
        check_unchanged("GS_OUTPUT is " + label, base, run, messages=0)
        check(open(victim).read() == "precious\n", "%s: the symlink's target was changed" % label)
        check(sorted(os.listdir(outside)) == ["victim"], "%s: a file appeared outside: %s" % (label, os.listdir(outside)))
        written = [t for t in c.traces() if not os.path.islink(t)]
        check(len(written) == 1 and os.path.basename(written[0]) == "t.1.gstrace",
              "%s: expected the trace as t.1.gstrace beside the link, found %s" % (label, os.listdir(c.out)))
        print("  GS_OUTPUT is %s -> written as %s, target untouched" % (label, [os.path.basename(w) for w in written]))
        for name in os.listdir(c.out):
            os.unlink(os.path.join(c.out, name))
    # Over-long values and a CUPTI library that is not an absolute path.
    refused(c, "GS_OUTPUT of 5000 bytes", cmd, base, output="/tmp/" + "a" * 5000)
    refused(c, "GS_CUPTI_LIBRARY relative", cmd, base, extra={"GS_CUPTI_LIBRARY": "libcupti.so.13"})
    refused(c, "GS_CUPTI_LIBRARY of 5000 bytes", cmd, base, extra={"GS_CUPTI_LIBRARY": "/" + "l" * 4999})

    # What the agent opens, under strace: writes only in its output folder, code only itself and
    # the CUPTI library it was given.
    if shutil.which("strace") is None:
        raise Skip("strace is not installed (tools/setup installs it): the file-access part did not run")
    cupti = os.path.join(args.simgpu_lib, "libcupti.so.13")
    opened = {}
    for label, agent in (("without", False), ("with", True)):
        shutil.rmtree(c.out)
        os.makedirs(c.out)
        log = os.path.join(c.dir, "strace-%s.log" % label)
        # -y prints each descriptor's path, so that a mapping names the file it maps.
        run = c.run(["strace", "-f", "-qq", "-y", "-o", log, "-e",
                     "trace=open,openat,openat2,creat,mkdir,mkdirat,rename,renameat,renameat2,unlink,"
                     "unlinkat,symlink,symlinkat,link,linkat,truncate,chmod,fchmodat,mmap",
                     args.app, "steps", "5"], agent=agent, extra={"GS_CUPTI_LIBRARY": cupti})
        check(run.returncode == 3, "under strace (%s the agent): exit %d %s" % (label, run.returncode, run.stderr[-300:]))
        opened[label] = parse_strace(log)
    writes = opened["with"]["writes"] - opened["without"]["writes"]
    out_real = os.path.realpath(c.out)
    # /proc/self/task/N/comm: pthread_setname_np naming the agent's own threads (process state,
    # not a file anywhere).
    stray = sorted(w for w in writes if not os.path.realpath(w).startswith(out_real + "/")
                   and not re.match(r"^/proc/self/task/\d+/comm$", w))
    check(not stray, "the agent wrote outside its output folder: %s" % stray)
    check(len(c.traces()) == 1, "expected one trace in the output folder: %s" % os.listdir(c.out))
    code = opened["with"]["code"] - opened["without"]["code"]
    allowed = {os.path.realpath(args.agent), os.path.realpath(cupti)}
    extra_code = sorted(x for x in code if os.path.realpath(x) not in allowed)
    check(not extra_code, "the agent loaded code it was not told about: %s" % extra_code)
    print("  strace: the agent added %d written path(s) %s and %d shared object(s) %s" % (
        len(writes), sorted(writes), len(code), sorted(code)))


def parse_strace(log):
    """Files opened for writing (or created/removed/renamed), and files mapped executable, by path.

    Code is what gets mapped with PROT_EXEC: the agent also opens shared objects read-only to read
    their symbol tables at exit (the sampled stacks' frames, agent/symbolize/elf_symbolizer.cc), and
    whether a sample landed in, say, the dynamic loader is chance; reading a file is not loading it.
    """
    writes, code = set(), set()
    call = re.compile(r'^\d+\s+(\w+)\((?:AT_FDCWD|-?\d+)(?:<[^>]*>)?,?\s*"([^"]*)"(.*)$')
    mapped = re.compile(r'^\d+\s+mmap\([^,]*, \d+, ([A-Z_|]+), [A-Z_|]+, \d+<([^>]*)>, ')
    for line in open(log, errors="replace"):
        line = line.strip()
        m = mapped.match(line)
        if m:
            if "PROT_EXEC" in m.group(1):
                code.add(m.group(2))
            continue
        m = call.match(line)
        if not m:
            continue
        name, path, rest = m.groups()
        failed = re.search(r"= -1 ", rest) is not None
        if name in ("open", "openat", "openat2"):
            if not failed and re.search(r"O_WRONLY|O_RDWR|O_CREAT|O_TRUNC", rest):
                writes.add(path)
        elif not failed:
            writes.add(path)
    return {"writes": writes, "code": code}


# ---- flood ---------------------------------------------------------------------------------------

def peak_rss_kib(c, cmd, agent, extra):
    """Runs cmd in a fresh helper process so that RUSAGE_CHILDREN holds only this run."""
    helper = ("import resource,subprocess,sys,json;"
              "p=subprocess.run(sys.argv[1:],capture_output=True,text=True);"
              "print(json.dumps([p.returncode,p.stdout,p.stderr,"
              "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))")
    p = subprocess.run([sys.executable, "-c", helper] + cmd, env=c.environ(agent, extra),
                       capture_output=True, text=True, timeout=180)
    rc, out, err, rss = json.loads(p.stdout)
    return Result(rc, out, err), rss


def case_flood(args):
    c = Case(args, "flood")
    threads, seconds, buffer_mb = 4, 3, 4
    # simgpu's own launch cost is set to zero so that the agent, not the simulator, is the limit.
    sim = {"SIMGPU_LAUNCH_HOST_NS": "0", "SIMGPU_DEVICE_LATENCY_NS": "0", "SIMGPU_KERNEL_NS": "0"}
    # Every runtime call outside the agent's table recorded (GS_OTHER_CALLS_MIN_US=0), not only
    # those that last 10 us: how many of the set-up calls (stream create/destroy) take that long
    # varies from run to run, and the count below must be exact.
    settings = dict(sim, GS_BUFFER_MB=str(buffer_mb), GS_OTHER_CALLS_MIN_US="0")
    # Calls that are not launches: what a zero-second flood makes (init, stream create/destroy).
    zero, _ = peak_rss_kib(c, [args.app, "flood", str(threads), "0"], True, settings)
    zero_trace = only_trace(c)
    s0 = zero_trace and summary(args, zero_trace)
    os.unlink(zero_trace) if zero_trace else None
    # A short flood (0.3 s) gives the agent's cost once it records (code, symbol and DWARF
    # tables, threads, chunk buffers): the long flood must not add more than the buffer bound.
    _, rss_short_base = peak_rss_kib(c, [args.app, "flood", str(threads), "0.3"], False, sim)
    _, rss_short_agent = peak_rss_kib(c, [args.app, "flood", str(threads), "0.3"], True, settings)
    for t in c.traces():
        os.unlink(t)
    base, rss_base = peak_rss_kib(c, [args.app, "flood", str(threads), str(seconds)], False, sim)
    run, rss_agent = peak_rss_kib(c, [args.app, "flood", str(threads), str(seconds)], True, settings)
    check(base.returncode == 0 and run.returncode == 0, "flood failed: %s / %s" % (base.stderr[-300:], run.stderr[-300:]))
    rate = lambda r: float(re.search(r"rate (\d+)", r.stdout).group(1)) if "rate" in r.stdout else 0.0
    launches = int(re.search(r"launches (\d+)", run.stdout).group(1)) if "launches" in run.stdout else 0
    lines = gpustall_lines(run.stderr)
    check(all("drop" in l for l in lines), "unexpected gpustall: lines %r" % lines)
    path = only_trace(c)
    s = path and check_readable(args, path, expect_clean=True)
    if not (s and s0):
        return
    st = s["stats"]
    # Memory: the agent's own accounting against its bound, and the process's peak RSS.
    check(0 < st["memory_used_bytes"] <= st["memory_bound_bytes"] == buffer_mb << 20,
          "buffer high-water mark %d bytes, bound %d (GS_BUFFER_MB=%d)" % (st["memory_used_bytes"], st["memory_bound_bytes"], buffer_mb))
    fixed_mib = (rss_short_agent - rss_short_base) / 1024.0
    growth_mib = (rss_agent - rss_base) / 1024.0
    # Under the flood the agent may add its buffers (<= the bound) and the writer's per-chunk
    # encoding state on top of its fixed cost; 8 MiB of slack for the latter and allocator noise.
    check(growth_mib - fixed_mib <= buffer_mb + 8,
          "with the agent, peak RSS grew by %.1f MiB under the %d s flood vs %.1f MiB in 0.3 s: %.1f MiB more "
          "than the bound allows (GS_BUFFER_MB=%d + 8)" % (growth_mib, seconds, fixed_mib, growth_mib - fixed_mib, buffer_mb))
    # Drops: every intercepted call is in the trace or counted as dropped, exactly.
    syncs = launches // 1024
    expected = launches + syncs + s0["api_calls"]
    accounted = s["api_calls"] + st["ring_dropped"]
    # On a mismatch, what was recorded by function against what the application made, and the
    # host waits (their ring drops count in ring_dropped too), to tell a call seen twice or an
    # extra call from a miscount of the drops.
    made = dict(s0["calls_by_function"])
    made["cudaLaunchKernel"] = made.get("cudaLaunchKernel", 0) + launches
    made["cudaStreamSynchronize"] = made.get("cudaStreamSynchronize", 0) + syncs
    check(accounted == expected,
          "recorded %d + dropped %d = %d calls, the application made %d (%d launches, %d syncs, %d others); "
          "recorded by function %r, made by function %r; %d recorded twice; host waits recorded %d" % (
              s["api_calls"], st["ring_dropped"], accounted, expected, launches, syncs, s0["api_calls"],
              s["calls_by_function"], made, s["repeated_calls"], st["host_waits_recorded"]))
    check(s["repeated_calls"] == 0, "%d calls recorded twice (same thread, function and entry time)" % s["repeated_calls"])
    # GPU records: each launch's activity is in the trace or counted as dropped (CUPTI's count, or
    # the agent's activity buffer over its bound: other_dropped).
    gpu_accounted = s["activities"] + st["cupti_dropped"] + st["other_dropped"]
    check(gpu_accounted >= launches,
          "GPU records: %d in the trace + %d + %d dropped < %d launches" % (
              s["activities"], st["cupti_dropped"], st["other_dropped"], launches))
    check(st["api_calls_recorded"] == s["api_calls"],
          "Stats.api_calls_recorded %d but %d calls in the file" % (st["api_calls_recorded"], s["api_calls"]))
    print("FLOOD: %d threads, %d s: without the agent %.0f launches/s, with it %.0f launches/s (ratio %.2f); "
          "%d launches, %d calls recorded, %d dropped (%.1f%%), %d GPU records kept, %d dropped; buffer high-water %.1f of %d MiB; "
          "peak RSS %.1f MiB without, %.1f MiB with (+%.1f MiB; in a 0.3 s flood +%.1f MiB)" % (
              threads, seconds, rate(base), rate(run), rate(run) / max(rate(base), 1), launches, s["api_calls"],
              st["ring_dropped"], 100.0 * st["ring_dropped"] / max(expected, 1), s["activities"],
              st["cupti_dropped"] + st["other_dropped"], st["memory_used_bytes"] / 2**20,
              buffer_mb, rss_base / 1024.0, rss_agent / 1024.0, growth_mib, fixed_mib))


CASES = {
    "fork_continue": case_fork_continue,
    "abort": case_abort,
    "underscore_exit": case_underscore_exit,
    "sigterm_default": case_sigterm_default,
    "sigterm_handled": case_sigterm_handled,
    "sigkill": case_sigkill,
    "threads16": case_threads16,
    "py_os_exit": case_py_os_exit,
    "py_workers_fork": lambda a: case_py_workers(a, "fork"),
    "py_workers_spawn": lambda a: case_py_workers(a, "spawn"),
    "unwritable_output": case_unwritable_output,
    "disk_full": case_disk_full,
    "file_size_limit": case_file_size_limit,
    "bad_settings": case_bad_settings,
    "security": case_security,
    "flood": case_flood,
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("case", choices=sorted(CASES))
    for opt in ("--agent", "--simgpu-lib", "--app", "--summary", "--gsanalyze", "--config-doc", "--work-dir"):
        parser.add_argument(opt, required=True)
    parser.add_argument("--py-dir", default="")
    parser.add_argument("--python", default="")
    args = parser.parse_args()
    for name in ("agent", "simgpu_lib", "app", "summary", "gsanalyze", "config_doc", "work_dir"):
        setattr(args, name, os.path.abspath(getattr(args, name)))
    try:
        CASES[args.case](args)
    except Skip as e:
        if FAILURES:
            return exit_status()
        print("SKIP: %s" % e)
        return SKIP
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
