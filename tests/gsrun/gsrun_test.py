#!/usr/bin/env python3
"""gsrun_test.py — one case of tools/gsrun (ctest runs one case per test, gsrun.<case>).

    gsrun_test.py CASE --gsrun tools/gsrun --build-dir BUILD --simgpu-lib DIR
                  --workload "CMD ARGS" --version X.Y.Z --work-dir DIR

Every case runs the real script with a scrubbed environment (no launcher variables from a job this
test may itself run in, no GS_*), GS_BUILD_DIR pointing at the build tree, and checks what the
command saw (its environment, stdin, signals), what gsrun returned, and which traces appeared.
Cases that trace run the data-starved workload on simgpu. Exit status 0 = pass.
"""
import argparse
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testlib"))
from gstest import check, exit_status, fail  # noqa: E402  (tests/testlib)

# Variables that make a process part of a job; removed from every environment we start.
LAUNCHER_VARS = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "SLURM_PROCID", "SLURM_LOCALID",
                 "SLURM_JOB_ID", "SLURM_NTASKS", "SLURM_NTASKS_PER_NODE", "OMPI_COMM_WORLD_RANK",
                 "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE",
                 "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "PBS_JOBID", "LSB_JOBID", "TORCHELASTIC_RUN_ID",
                 "PMIX_NAMESPACE")
# Prints the variables gsrun sets, one NAME=VALUE a line (NAME= when unset).
SHOW_ENV = ["sh", "-c", 'for v in LD_PRELOAD CUDA_INJECTION64_PATH GS_OUTPUT GS_STACKS GS_STACK_DEPTH '
            'GS_BUFFER_MB GS_CUPTI GS_LOG GS_FLUSH_MS GS_PERIODIC_MS GS_PERIODIC_WINDOW_MS; do eval "echo $v=\\${$v-}"; done']
TIMEOUT = 60
SIGNAL_TIMEOUT = 5  # a signal that was not forwarded: the command would run forever


class Case:
    def __init__(self, args, name):
        self.args = args
        self.dir = os.path.join(args.work_dir, name)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)

    def environ(self, extra=None, build_dir=True):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("GS_") and not k.startswith("SIMGPU_") and k not in LAUNCHER_VARS
               and k not in ("LD_PRELOAD", "CUDA_INJECTION64_PATH")}
        env["LD_LIBRARY_PATH"] = self.args.simgpu_lib
        if build_dir:
            env["GS_BUILD_DIR"] = self.args.build_dir
        env.update(extra or {})
        return env

    def run(self, gsrun_args, extra=None, stdin=None, gsrun=None, build_dir=True, cwd=None):
        cmd = [gsrun or self.args.gsrun] + gsrun_args
        p = subprocess.run(cmd, env=self.environ(extra, build_dir), cwd=cwd or self.dir, input=stdin,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")

    def shown_env(self, gsrun_args, extra=None):
        rc, out, err = self.run(gsrun_args + SHOW_ENV, extra)
        check(rc == 0, "gsrun %s env exited %d: %s" % (gsrun_args, rc, err))
        return dict(line.split("=", 1) for line in out.splitlines() if "=" in line), err


def agent_path(args):
    return os.path.realpath(os.path.join(args.build_dir, "lib", "libgsagent.so"))


def report_json(args, traces):
    gsanalyze = os.path.join(args.build_dir, "analyzer", "gsanalyze")
    p = subprocess.run([gsanalyze, "report", "--json"] + traces, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=TIMEOUT)
    check(p.returncode == 0, "gsanalyze report %s: %s" % (traces, p.stderr.decode(errors="replace")))
    return json.loads(p.stdout) if p.returncode == 0 else {"traces": []}


def traces_under(folder):
    found = []
    for root, _, files in os.walk(folder):
        found += [os.path.join(root, f) for f in files if f.endswith(".gstrace")]
    return sorted(found)


# --- cases ---------------------------------------------------------------------------------------

def case_exit_status(args):
    """COMMAND's exit status comes back, whether gsrun execs it or waits for it (--analyze)."""
    c = Case(args, "exit_status")
    for mode in ([], ["--analyze"]):
        for status in (0, 3, 42):
            rc, _, err = c.run(mode + ["sh", "-c", "exit %d" % status])
            check(rc == status, "gsrun %s: exit %d came back as %d (%s)" % (mode, status, rc, err))
    # A program that does not exist is bad input: nothing starts, one line, exit 2.
    rc, _, err = c.run(["/nonexistent/command"])
    check(rc == 2 and len(err.splitlines()) == 1, "a missing command: status %d, want 2 with one line (%r)" % (rc, err))


def case_signal_death(args):
    """Death by SIGTERM/SIGKILL: a shell sees 128+N in both modes; exec mode keeps the signal."""
    c = Case(args, "signal_death")
    for mode in ([], ["--analyze"]):
        for sig in (signal.SIGTERM, signal.SIGKILL):
            # The shell reports what its child (gsrun) ended with, as a job script would see it.
            script = '"$@"; echo "status=$?"'
            p = subprocess.run(["sh", "-c", script, "sh", args.gsrun] + mode +
                               ["sh", "-c", "kill -%d $$" % sig], env=c.environ(), cwd=c.dir,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
            out = p.stdout.decode()
            check("status=%d" % (128 + sig) in out,
                  "gsrun %s, command killed by %s: shell saw %r, want status=%d" %
                  (mode, sig.name, out.strip(), 128 + sig))
            rc, _, err = c.run(mode + ["sh", "-c", "kill -%d $$" % sig])
            want = -sig if not mode else 128 + sig  # exec: the very process died of the signal
            check(rc == want, "gsrun %s, killed by %s: returncode %d, want %d" % (mode, sig.name, rc, want))
            check("Killed" not in err and "Terminated" not in err, "shell job noise on stderr: %r" % err)


def start_and_wait_ready(c, gsrun_args):
    # A session of its own: no controlling terminal, so gsrun forwards SIGINT even when this test
    # runs from a terminal (there it leaves Ctrl-C to the terminal, which signals the whole group).
    p = subprocess.Popen([c.args.gsrun] + gsrun_args, env=c.environ(), cwd=c.dir, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    line = p.stdout.readline().decode().strip()
    check(line == "ready", "child did not start: %r" % line)
    return p


def finish(p):
    """Output of a process started by start_and_wait_ready; its whole session is killed if it
    does not end (a command that never got its signal would hold the pipes open forever)."""
    try:
        return p.communicate(timeout=SIGNAL_TIMEOUT)
    except subprocess.TimeoutExpired:
        fail("still running %d s after the signal" % SIGNAL_TIMEOUT)
        os.killpg(p.pid, signal.SIGKILL)
        return p.communicate()


def case_signal_forward(args):
    """kill -TERM/-HUP/-USR1/-USR2/-INT gsrun reaches the command; its chosen status comes back."""
    c = Case(args, "signal_forward")
    trapper = ('for s in TERM HUP USR1 USR2 INT; do trap "echo got $s; exit 7" $s; done; echo ready; '
               'while :; do sleep 0.05; done')
    for mode in ([], ["--analyze"]):
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2, signal.SIGINT):
            p = start_and_wait_ready(c, mode + ["bash", "-c", trapper])
            p.send_signal(sig)
            out, err = finish(p)
            name = sig.name[3:]
            check(("got %s" % name) in out.decode(), "gsrun %s: %s not seen by the command: %r %r" %
                  (mode, name, out, err))
            check(p.returncode == 7, "gsrun %s: after %s, status %d, want 7" % (mode, name, p.returncode))
    # The command starts with the default dispositions of SIGINT/SIGQUIT (a shell's background job
    # would have them ignored, and Python would then never raise KeyboardInterrupt).
    for mode in ([], ["--analyze"]):
        rc, out, _ = c.run(["-q"] + mode + ["grep", "SigIgn", "/proc/self/status"])
        ignored = int(out.split()[1], 16) if rc == 0 and out.startswith("SigIgn:") else -1
        check(ignored >= 0 and ignored & 0x6 == 0, "gsrun %s: command ignores INT/QUIT: %r" % (mode, out))
    # A signal that does not end the command does not end gsrun either (it keeps waiting).
    survivor = ('trap "echo usr1" USR1; trap "echo term; exit 5" TERM; echo ready; '
                'while :; do sleep 0.05; done')
    p = start_and_wait_ready(c, ["--analyze", "bash", "-c", survivor])
    p.send_signal(signal.SIGUSR1)
    time.sleep(0.5)
    check(p.poll() is None, "gsrun ended after a signal its command survived")
    p.send_signal(signal.SIGTERM)
    out, _ = finish(p)
    check(out.decode().split() == ["usr1", "term"], "the command saw %r, want usr1 then term" % out)
    check(p.returncode == 5, "after USR1 then TERM: status %d, want 5" % p.returncode)


def case_stdio(args):
    """stdin reaches the command, stdout/stderr come back unchanged, in both modes."""
    c = Case(args, "stdio")
    data = b"line one\nline two\n\x00binary\xff\n" * 1000
    for mode in ([], ["--analyze"]):
        rc, out, err = c.run(["-q"] + mode + ["cat"], stdin=data)
        check(rc == 0, "cat exited %d" % rc)
        p = subprocess.run([args.gsrun, "-q"] + mode + ["cat"], input=data, env=c.environ(), cwd=c.dir,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
        check(p.stdout == data, "gsrun %s cat: stdout differs from stdin (%d vs %d bytes)" %
              (mode, len(p.stdout), len(data)))
        rc, out, err = c.run(["-q"] + mode + ["sh", "-c", "echo to-out; echo to-err >&2"])
        check(out == "to-out\n", "stdout: %r" % out)
        check("to-err\n" in err, "stderr: %r" % err)


def run_workload_rank(c, launcher_env, want_rank, want_job):
    """Runs the workload under gsrun with the default output; returns the trace it wrote."""
    cmd = [c.args.gsrun] + shlex.split(c.args.workload) + ["--steps", "5"]
    p = subprocess.run(cmd, env=c.environ(launcher_env), cwd=c.dir, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=TIMEOUT)
    check(p.returncode == 0, "workload under gsrun (%s) exited %d: %s" %
          (launcher_env, p.returncode, p.stderr.decode(errors="replace")))
    traces = traces_under(c.dir)
    if not check(len(traces) == 1, "%s: want one trace, found %s" % (launcher_env, traces)):
        return None
    trace = traces[0]
    folder, name = os.path.split(os.path.relpath(trace, c.dir))
    host = socket.gethostname()
    if want_job is not None:
        check(folder == "gpustall-" + want_job, "%s: run folder %r, want gpustall-%s" %
              (launcher_env, folder, want_job))
    else:
        check(re.fullmatch(r"gpustall-\d{8}T\d{6}Z", folder) is not None,
              "%s: run folder %r, want gpustall-<UTC time>" % (launcher_env, folder))
    m = re.fullmatch(r"(.+)-r(\w+)-(\d+)\.gstrace", name)
    if check(m is not None, "trace name %r is not HOST-rRANK-PID.gstrace" % name):
        check(m.group(1) == host, "host in name %r, want %r" % (m.group(1), host))
        check(m.group(2) == str(want_rank), "%s: rank in name %r, want %s" % (launcher_env, m.group(2), want_rank))
    # The agent's header agrees (it reads the same launcher variables).
    for t in report_json(c.args, [trace])["traces"]:
        check(t.get("rank") == want_rank, "%s: header rank %r, want %s" % (launcher_env, t.get("rank"), want_rank))
        check(t.get("host") == host, "header host %r, want %r" % (t.get("host"), host))
    return trace


def case_rank_naming(args):
    """torchrun, Slurm, Open MPI and PMI ranks (and job ids) end up in the trace's name."""
    launchers = [
        ({"RANK": "3", "LOCAL_RANK": "1", "TORCHELASTIC_RUN_ID": "tr-run"}, 3, "tr-run"),
        ({"SLURM_PROCID": "5", "SLURM_LOCALID": "1", "SLURM_JOB_ID": "4242"}, 5, "4242"),
        ({"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_LOCAL_RANK": "0"}, 2, None),
        ({"PMI_RANK": "1", "PBS_JOBID": "77.pbs/x"}, 1, "77.pbs_x"),  # '/' made file-name safe
    ]
    for i, (env, rank, job) in enumerate(launchers):
        c = Case(args, "rank_naming_%d" % i)
        run_workload_rank(c, env, rank, job)


def case_launcher_children(args):
    """`gsrun LAUNCHER`: ranks the launcher starts later each get their own named trace."""
    c = Case(args, "launcher_children")
    # A stand-in for torchrun: starts two ranks with RANK set, waits, fails if one failed.
    launcher = ('RANK=0 "$@" & a=$!; RANK=1 "$@" & b=$!; wait $a || exit 1; wait $b || exit 1')
    cmd = ["-o", "traces/", "sh", "-c", launcher, "launcher"] + shlex.split(args.workload) + ["--steps", "3"]
    rc, out, err = c.run(cmd)
    check(rc == 0, "launcher exited %d: %s" % (rc, err))
    names = sorted(os.path.basename(t) for t in traces_under(os.path.join(c.dir, "traces")))
    ranks = sorted(re.sub(r".*-r(\w+)-\d+\.gstrace$", r"\1", n) for n in names)
    check(ranks == ["0", "1"], "launcher's ranks wrote %s, want one trace each for ranks 0 and 1" % names)


def case_preload_kept(args):
    """An existing LD_PRELOAD is kept (after the agent); the agent is never there twice."""
    c = Case(args, "preload_kept")
    agent = agent_path(args)
    env, _ = c.shown_env(["-q"], {"LD_PRELOAD": "libm.so.6"})
    check(env.get("LD_PRELOAD") == agent + ":libm.so.6", "LD_PRELOAD=%r, want %s:libm.so.6" %
          (env.get("LD_PRELOAD"), agent))
    # Both are really loaded into the command.
    rc, out, err = c.run(["-q", "cat", "/proc/self/maps"], {"LD_PRELOAD": "libm.so.6"})
    check("libgsagent.so" in out and "libm.so.6" in out, "cat's maps lack the agent or libm: %s" % err)
    # A nested gsrun, or another build's agent, leaves exactly one libgsagent.so.
    env, _ = c.shown_env(["-q"], {"LD_PRELOAD": "/elsewhere/libgsagent.so libm.so.6:" + agent})
    check(env.get("LD_PRELOAD") == agent + ":libm.so.6", "LD_PRELOAD=%r after dedup" % env.get("LD_PRELOAD"))
    rc, out, err = c.run(["-q", args.gsrun, "-q"] + SHOW_ENV)
    check(out.count("libgsagent.so") == 2 and ("LD_PRELOAD=%s\n" % agent) in out,
          "nested gsrun: %r" % out)  # once in LD_PRELOAD, once in CUDA_INJECTION64_PATH


def case_injection_kept(args):
    """CUDA_INJECTION64_PATH: set when unset or "none", another tool's value kept."""
    c = Case(args, "injection_kept")
    agent = agent_path(args)
    env, _ = c.shown_env(["-q"])
    check(env.get("CUDA_INJECTION64_PATH") == agent, "unset -> %r" % env.get("CUDA_INJECTION64_PATH"))
    env, _ = c.shown_env(["-q"], {"CUDA_INJECTION64_PATH": "none"})
    check(env.get("CUDA_INJECTION64_PATH") == agent, "none -> %r" % env.get("CUDA_INJECTION64_PATH"))
    other = "/opt/nsight/libToolsInjection64.so"
    env, err = c.shown_env([], {"CUDA_INJECTION64_PATH": other})
    check(env.get("CUDA_INJECTION64_PATH") == other, "another tool's -> %r" % env.get("CUDA_INJECTION64_PATH"))
    check(other in err, "no notice that another tool's injection was kept: %r" % err)
    check(env.get("LD_PRELOAD") == agent, "LD_PRELOAD=%r with another injection" % env.get("LD_PRELOAD"))


def case_agent_missing(args):
    """No agent: exit 2 with one clear line, and the command does not run."""
    c = Case(args, "agent_missing")
    empty = os.path.join(c.dir, "empty-build")  # a build tree without libgsagent.so
    os.makedirs(empty)
    marker = os.path.join(c.dir, "ran")
    for gsrun_args in (["touch", marker], ["--agent", "/nonexistent/libgsagent.so", "touch", marker]):
        rc, out, err = c.run(gsrun_args, extra={"GS_BUILD_DIR": empty})
        check(rc == 2, "%s: status %d, want 2" % (gsrun_args, rc))
        check(len(err.splitlines()) == 1 and err.startswith("gsrun: ") and "libgsagent.so" in err,
              "%s: want one 'gsrun: ... libgsagent.so ...' line, got %r" % (gsrun_args, err))
        check(not os.path.exists(marker), "the command ran without an agent")
    rc, _, err = c.run(["--stacks", "sideways", "true"])
    check(rc == 2 and "--stacks" in err, "--stacks sideways: status %d, %r" % (rc, err))
    rc, _, err = c.run(["--depth", "500", "true"])
    check(rc == 2 and "--depth" in err, "--depth 500: status %d, %r" % (rc, err))
    rc, _, err = c.run(["--window", "5", "true"])
    check(rc == 2 and "--window" in err and "10" in err, "--window 5: status %d, %r" % (rc, err))
    rc, _, err = c.run([])
    check(rc == 2 and "no command" in err, "no command: status %d, %r" % (rc, err))
    # A bad GS_* value in the environment is refused the same way (the agent's own check), and so
    # is a program that does not exist: nothing starts.
    rc, _, err = c.run(["touch", marker], extra={"GS_SAMPLE_HZ": "lots"})
    check(rc == 2 and len(err.splitlines()) == 1 and "GS_SAMPLE_HZ" in err, "GS_SAMPLE_HZ=lots: %d %r" % (rc, err))
    rc, _, err = c.run(["/no/such/program"])
    check(rc == 2 and len(err.splitlines()) == 1 and "/no/such/program" in err, "missing program: %d %r" % (rc, err))
    check(not os.path.exists(marker), "the command ran despite a bad setting")


def case_symlink(args):
    """Through a symlink on PATH (e.g. ~/bin/gsrun -> tools/gsrun) it finds the front end and the
    build tree's agent. (Installed use is the wheel's `gpustall run`: tests/wheel.)"""
    c = Case(args, "symlink")
    link = os.path.join(c.dir, "gsrun-link")
    os.symlink(os.path.abspath(args.gsrun), link)
    rc, out, err = c.run(["-q"] + SHOW_ENV, gsrun=link)
    check(rc == 0 and ("LD_PRELOAD=%s\n" % agent_path(args)) in out, "through a symlink: %r %r" % (out, err))


def case_options(args):
    """Options map to GS_* variables; other GS_* pass through; -o resolves %j and makes paths absolute."""
    c = Case(args, "options")
    env, _ = c.shown_env(["-q", "--stacks", "fp", "--depth", "8", "--buffer-mb=16", "--no-cupti", "--log", "info",
                          "--every", "60000", "--window=6000"],
                         {"GS_FLUSH_MS": "250", "GS_STACKS": "none"})
    want = {"GS_STACKS": "fp", "GS_STACK_DEPTH": "8", "GS_BUFFER_MB": "16", "GS_CUPTI": "off", "GS_LOG": "info",
            "GS_FLUSH_MS": "250", "GS_PERIODIC_MS": "60000", "GS_PERIODIC_WINDOW_MS": "6000"}
    for k, v in want.items():
        check(env.get(k) == v, "%s=%r, want %r" % (k, env.get(k), v))
    env, _ = c.shown_env(["-q", "-o", "out/%j-%h-r%r-%p.gstrace"], {"SLURM_JOB_ID": "99"})
    check(env.get("GS_OUTPUT") == os.path.join(c.dir, "out", "99-%h-r%r-%p.gstrace"), "GS_OUTPUT=%r" % env.get("GS_OUTPUT"))
    check(os.path.isdir(os.path.join(c.dir, "out")), "-o's folder was not created")
    # '..' resolved here (the agent refuses '..' in GS_OUTPUT); symlinks are not resolved.
    os.makedirs(os.path.join(c.dir, "sub"))
    rc, out, err = c.run(["-q", "-o", "../up/%p.gstrace"] + SHOW_ENV, cwd=os.path.join(c.dir, "sub"))
    env = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    check(env.get("GS_OUTPUT") == os.path.join(c.dir, "up", "%p.gstrace"), "-o ../up/: %r" % env.get("GS_OUTPUT"))
    rc, _, err = c.run(["-q", "-o", "../up2/"] + shlex.split(args.workload), cwd=os.path.join(c.dir, "sub"))
    check(rc == 0 and "gpustall:" not in err, "-o ../up2/: exit %d, stderr %r" % (rc, err))
    check(len(traces_under(os.path.join(c.dir, "up2"))) == 1,
          "-o ../up2/: traces %s" % traces_under(os.path.join(c.dir, "up2")))
    env, _ = c.shown_env(["-q"], {"GS_OUTPUT": "/tmp/user-choice-%p.gstrace"})
    check(env.get("GS_OUTPUT") == "/tmp/user-choice-%p.gstrace", "the user's GS_OUTPUT changed: %r" % env.get("GS_OUTPUT"))
    env, _ = c.shown_env(["-q", "-o", "folder/"])
    check(env.get("GS_OUTPUT") == os.path.join(c.dir, "folder", "%h-r%r-%p.gstrace"), "-o folder/: %r" % env.get("GS_OUTPUT"))
    # Options end at the command: its own -o stays its own.
    rc, out, _ = c.run(["-q", "echo", "-o", "--analyze"])
    check(rc == 0 and out == "-o --analyze\n", "command options taken by gsrun: %r" % out)
    rc, out, _ = c.run(["-q", "--", "echo", "x"])
    check(out == "x\n", "-- not honoured: %r" % out)


def case_help_version(args):
    """--help lists every option the script accepts; --version is the project's version."""
    c = Case(args, "help_version")
    rc, out, _ = c.run(["--help"], build_dir=False)
    check(rc == 0, "--help exited %d" % rc)
    # The options the front end parses (tools/gsrun is `gpustall run` under another name).
    with open(os.path.join(os.path.dirname(os.path.abspath(args.gsrun)), "frontend", "gpustall", "run.py")) as f:
        accepted = set(re.findall(r'"(--[a-z][a-z-]*)"', f.read()))
    check(len(accepted) >= 10, "found only %s in the option parser" % sorted(accepted))
    for opt in sorted(accepted):
        check(opt in out, "--help does not mention %s" % opt)
    rc, out, _ = c.run(["--version"], build_dir=False)
    check(rc == 0 and out.strip().endswith(" " + args.version), "--version: %r, want ... %s" % (out, args.version))


def case_analyze(args):
    """--analyze prints gsanalyze's report of this run's traces on stderr and keeps the status."""
    c = Case(args, "analyze")
    workload = shlex.split(args.workload) + ["--steps", "5"]
    rc, out, err = c.run(["-o", "out/", "--analyze", "sh", "-c", '"$@"; exit 3', "sh"] + workload)
    check(rc == 3, "status %d, want the command's 3" % rc)
    check("workload=data_starved" in out, "the workload's stdout is missing: %r" % out)
    check("gsanalyze" not in out and "GPU-Util" not in out, "the report went to stdout")
    check("GPU-Util" in err and "load_batch" in err, "no report naming load_batch on stderr: %s" % err[-2000:])
    check("1 trace" in err, "want a report on exactly 1 trace: %s" % err[:400])
    # A second run into the same folder reports only its own trace.
    rc, out, err = c.run(["-o", "out/", "--analyze"] + workload)
    check(rc == 0, "second run: status %d" % rc)
    check("1 trace" in err, "second run's report is not on its own trace alone: %s" % err[:400])
    check(len(traces_under(os.path.join(c.dir, "out"))) == 2, "want two traces in out/")
    # Ranks sharing a folder (srun gsrun --analyze ...): each reports on its own rank's trace.
    launcher = 'RANK=0 "$@" 2>r0.err & a=$!; RANK=1 "$@" 2>r1.err & b=$!; wait $a && wait $b'
    p = subprocess.run(["sh", "-c", launcher, "sh", args.gsrun, "-o", "shared/", "--analyze"] + workload,
                       env=c.environ(), cwd=c.dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
    check(p.returncode == 0, "two ranks: status %d" % p.returncode)
    for r in (0, 1):
        with open(os.path.join(c.dir, "r%d.err" % r)) as f:
            err = f.read()
        check("1 trace" in err and ("rank %d" % r) in err, "rank %d's report: %s" % (r, err[:400]))
    # No CUDA, no trace: a note, and the status stays.
    rc, out, err = c.run(["-o", "none/", "--analyze", "sh", "-c", "exit 42"])
    check(rc == 42 and "no new trace" in err, "no-CUDA run: status %d, %r" % (rc, err))


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--gsrun", required=True)
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--simgpu-lib", required=True)
    ap.add_argument("--workload", required=True, help="command line of the data-starved workload")
    ap.add_argument("--version", required=True)
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    args.gsrun = os.path.abspath(args.gsrun)
    CASES[args.case](args)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
