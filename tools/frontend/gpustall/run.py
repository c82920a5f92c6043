"""gpustall run [options] [--] COMMAND ARGS...: run a command, and everything it starts, under the agent.

Works wherever job wrappers sit: `gpustall run torchrun ...`, `torchrun --no-python gpustall run
python x.py`, `srun gpustall run python x.py`, `mpirun gpustall run ./app`. In order:
  1. the agent is libgsagent.so inside the installed package (or the build tree), by absolute path;
  2. every GS_* value (options and environment) and the trace location are checked by the agent's
     own code (gs_agent_env: one copy of the rules, the agent's): a bad value is one line and exit
     2, nothing started;
  3. LD_PRELOAD (ours first, never a second libgsagent.so), CUDA_INJECTION64_PATH (only if unset
     or "none": another tool's injection is kept), NVTX_INJECTION64_PATH (same rule), GS_OUTPUT (a
     per-job folder and a rank-aware file name; the agent expands %h %r %p itself). Which CUPTI
     the job uses is the agent's rule alone (the one beside the CUDA runtime the job loaded:
     agent/cupti/cupti_library.h): the job's Python need not be this one;
  4. without --analyze, exec COMMAND: its exit status, death by signal, signals, stdio and pid are
     its own; a small process of ours, outside the job's process group, waits for it to end and
     then says which traces it wrote and how the agent captured them (read from the trace), or
     that no CUDA work was seen; with --analyze, run it as a child (same process group and stdin),
     forward INT/TERM/HUP/USR1/USR2, wait, print `gsanalyze report` of the traces it wrote on
     stderr, and exit with its status (128+N after death by signal N).
"""
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from fnmatch import fnmatchcase

from gpustall import __version__, native

USAGE = """usage: {prog} [options] [--] COMMAND ARGS...

Runs COMMAND, and every process it starts, under the gpustall agent (libgsagent.so), writing one
trace per CUDA process. Put it where the job wrapper starts the training process:
  {prog} torchrun --nproc-per-node 8 train.py
  torchrun --nproc-per-node 8 --no-python {prog} python train.py
  srun {prog} python train.py
  mpirun -np 16 {prog} -o run1/ ./app     (a bare mpirun gives no job id: name the folder)

options:
  -o, --output DIR_OR_PATTERN
                    where traces go: a folder (ending in / or existing) gets files named
                    %h-r%r-%p.gstrace, anything else is a file pattern with %h host, %r rank
                    ("norank" outside a job), %p pid, %t start time, %j job id, %% a percent
                    sign. Default: ./gpustall-JOBID/ (JOBID from the launcher: SLURM_JOB_ID,
                    TORCHELASTIC_RUN_ID, PBS_JOBID, LSB_JOBID; else the UTC start time). A
                    GS_OUTPUT already in the environment is used when -o is not given.
      --stacks MODE native stacks: none, fp (frame pointers) or unwind (GS_STACKS)
      --depth N     maximum native frames per stack, 1-128 (GS_STACK_DEPTH)
      --buffer-mb N bound on the agent's buffers in MiB, 4-4096 (GS_BUFFER_MB)
      --no-cupti    interposition only, no CUPTI (GS_CUPTI=off)
      --on-demand   load the agent dormant: nothing is recorded until `gpustall start` opens a
                    capture window (each window is a trace of its own; GS_ON_DEMAND=1)
      --every MS    record in capture windows, one every MS milliseconds from the start, dormant
                    between: the cost times the fraction recorded (GS_PERIODIC_MS)
      --window MS   each --every window's length, default 5000 (GS_PERIODIC_WINDOW_MS)
      --log LEVEL   agent messages: quiet, warn, info or debug (GS_LOG)
      --analyze     when COMMAND ends, print `gsanalyze report` of the traces it wrote on
                    stderr; the exit status stays COMMAND's
      --simgpu      run on the simulated GPU bundled for the demo (no GPU needed)
      --agent PATH  libgsagent.so to use (default: the one installed with this command)
      --gsanalyze PATH
                    gsanalyze for --analyze (default: the one installed with this command)
  -q, --quiet       no "traces go to ..." line, nor the one at the end saying what was written
  -h, --help        this text
      --version     the version

Other GS_* variables in the environment (GS_FLUSH_MS, GS_DISABLE, ...) pass through (checked like
the options). Exit status: COMMAND's (128+N after death by signal N); 2 when {prog} itself cannot
start it (bad option or setting, program or agent not found).
"""

# option -> GS_* variable it sets (value options), and flags with their fixed value.
VALUE_OPTIONS = {"--stacks": "GS_STACKS", "--depth": "GS_STACK_DEPTH", "--buffer-mb": "GS_BUFFER_MB",
                 "--log": "GS_LOG", "--every": "GS_PERIODIC_MS", "--window": "GS_PERIODIC_WINDOW_MS"}
FLAG_SETTINGS = {"--no-cupti": ("GS_CUPTI", "off"), "--on-demand": ("GS_ON_DEMAND", "1")}
FORWARDED_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP", "SIGUSR1", "SIGUSR2")


class UsageError(Exception):
    """One line for stderr; exit 2, nothing started."""


class Options:
    def __init__(self):
        self.output = None
        self.agent = None
        self.gsanalyze = None
        self.analyze = False
        self.quiet = False
        self.simgpu = False
        self.settings = {}  # GS_* -> value (from options)
        self.option_of = {}  # GS_* -> the option that set it (for error messages)
        self.command = []


def parse(argv, prog):
    """Options end at the first non-option (or --): the command's own options stay its own."""
    o = Options()
    i = 0
    while i < len(argv):
        a = argv[i]
        name, eq, inline = a.partition("=")
        takes_value = name in VALUE_OPTIONS or name in ("-o", "--output", "--agent", "--gsanalyze")

        def value():
            nonlocal i
            if eq:
                return inline
            if i + 1 >= len(argv):
                raise UsageError("option %s needs a value (try --help)" % a)
            i += 1
            return argv[i]

        if a == "--":
            i += 1
            break
        if a in ("-h", "--help"):
            print(USAGE.format(prog=prog), end="")
            raise SystemExit(0)
        if a == "--version":
            print("%s (gpustall) %s" % (prog, __version__))
            raise SystemExit(0)
        if takes_value and (name.startswith("--") or not eq):
            v = value()
            if name in ("-o", "--output"):
                o.output = v
            elif name == "--agent":
                o.agent = v
            elif name == "--gsanalyze":
                o.gsanalyze = v
            else:
                o.settings[VALUE_OPTIONS[name]] = v
                o.option_of[VALUE_OPTIONS[name]] = name
        elif a in FLAG_SETTINGS:
            var, v = FLAG_SETTINGS[a]
            o.settings[var] = v
            o.option_of[var] = a
        elif a == "--analyze":
            o.analyze = True
        elif a == "--simgpu":
            o.simgpu = True
        elif a in ("-q", "--quiet"):
            o.quiet = True
        elif a.startswith("-") and a != "-":
            raise UsageError("unknown option '%s' (try --help)" % a)
        else:
            break
        i += 1
    o.command = argv[i:]
    if not o.command:
        raise UsageError("no command given (usage: %s [options] [--] COMMAND ARGS...; try --help)" % prog)
    return o


def ask_agent(agent_env, env, output):
    """The agent's verdict and plan (gs_agent_env plan): a dict of its key=value lines."""
    cmd = [agent_env, "plan"] + (["--output", output] if output is not None else [])
    try:
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    except OSError as e:
        raise UsageError("cannot run %s: %s" % (agent_env, e))
    answer = dict(line.split("=", 1) for line in p.stdout.decode(errors="replace").splitlines() if "=" in line)
    if p.returncode == 2 and "error" in answer:
        return answer
    if p.returncode != 0:
        raise UsageError("%s exited %d: %s" % (agent_env, p.returncode, p.stderr.decode(errors="replace").strip()))
    return answer


def find_program(command, env):
    program = command[0]
    if "/" in program:
        return os.path.isfile(program) and os.access(program, os.X_OK)
    return shutil.which(program, path=env.get("PATH", os.defpath)) is not None


def prepare(o, prog, env):
    """Fills `env` for the job; returns (agent plan, messages). Raises UsageError."""
    n = native.locate()
    agent = o.agent or n.agent
    if not os.path.isfile(agent):
        where = "(--agent)" if o.agent else "(looked in %s; build target gsagent or pass --agent PATH)" % os.path.dirname(agent)
        raise UsageError("agent library libgsagent.so not found at %s %s" % (agent, where))
    agent = os.path.realpath(agent)
    agent_env = n.agent_env
    if o.agent and not native.installed():  # a build tree's agent: its own tree's gs_agent_env
        beside = os.path.join(os.path.dirname(os.path.dirname(agent)), "bin", "gs_agent_env")
        agent_env = beside if os.access(beside, os.X_OK) else agent_env
    if not os.access(agent_env, os.X_OK):
        raise UsageError("%s not found (build target gs_agent_env)" % agent_env)

    env.update(o.settings)
    if o.simgpu:
        env["LD_LIBRARY_PATH"] = n.simgpu_lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    messages = []
    plan = ask_agent(agent_env, env, o.output)
    if "error" in plan:
        var = plan.get("error_variable", "")
        opt = o.option_of.get(var)
        if var == "GS_OUTPUT" and o.output is not None:
            opt = "--output"
        raise UsageError(("%s: %s" % (opt, plan["error"])) if opt else plan["error"])
    if not find_program(o.command, env):
        raise UsageError("program '%s' not found (or not executable)" % o.command[0])

    # LD_PRELOAD: ours first; any other libgsagent.so goes (one process, one agent). ld.so
    # separates entries by ':' or spaces.
    existing = [e for e in env.get("LD_PRELOAD", "").replace(" ", ":").split(":") if e]
    env["LD_PRELOAD"] = ":".join([agent] + [e for e in existing if os.path.basename(e) != "libgsagent.so"])
    # The driver loads one injection library: another tool's (Nsight, a profiler) is kept, and
    # LD_PRELOAD alone still records the runtime calls.
    injection = env.get("CUDA_INJECTION64_PATH", "")
    if not injection or injection == "none" or os.path.basename(injection) == "libgsagent.so":
        env["CUDA_INJECTION64_PATH"] = agent
    else:
        messages.append("CUDA_INJECTION64_PATH is another tool's (%s); kept (the agent still records "
                        "through LD_PRELOAD)" % injection)
    # NVTX v3 hands its ranges to the one library named here; another tool's is kept.
    nvtx = env.get("NVTX_INJECTION64_PATH", "")
    if not nvtx or os.path.basename(nvtx) == "libgsagent.so":
        env["NVTX_INJECTION64_PATH"] = agent
    else:
        messages.append("NVTX_INJECTION64_PATH is another tool's (%s); kept (no NVTX ranges in the trace)" % nvtx)

    trace_dir = plan["trace_dir"]
    if "%" not in trace_dir:
        try:
            os.makedirs(trace_dir, exist_ok=True)
        except OSError as e:
            raise UsageError("cannot create the trace folder '%s': %s" % (trace_dir, e.strerror))
    env["GS_OUTPUT"] = plan["gs_output"]
    if plan.get("rank", "") in ("", "0"):
        messages.append("traces go to %s/" % trace_dir)
    return plan, messages


def list_traces(plan):
    folder = plan["trace_dir"]
    if "%" in folder or not os.path.isdir(folder):
        return set()
    return {os.path.join(folder, f) for f in os.listdir(folder)
            if fnmatchcase(f, plan["glob"]) and os.path.isfile(os.path.join(folder, f))}


def capture_of(gsanalyze, trace):
    """How the agent captured `trace`, from its header ("cupti: /x/libcupti.so.13 (CUDA 13 CUPTI, API ...);
    runtime libcudart.so.13"),
    as gsanalyze dump prints it; "" when it cannot say. Only the header is read."""
    if not gsanalyze or not os.access(gsanalyze, os.X_OK):
        return ""
    try:
        p = subprocess.Popen([gsanalyze, "dump", trace], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
    except OSError:
        return ""
    found = ""
    try:
        for raw in p.stdout:
            line = raw.decode(errors="replace")
            if line.startswith("header.capture "):
                fields = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', line))
                found = fields.get("text", "") + (": " + fields["detail"] if fields.get("detail") else "")
                if fields.get("cuda_runtime"):
                    found += "; runtime " + fields["cuda_runtime"]
                break
            if not line.startswith(("#", "header.")):
                break
    finally:
        p.kill()
        p.wait()
    return found


def exit_report(me, plan, before, gsanalyze, on_demand):
    """The line said when the command has ended: the traces it wrote, or why there is none."""
    folder = plan["trace_dir"]
    traces = sorted(list_traces(plan) - before)
    if not traces:
        why = "no capture window was opened (gpustall start)" if on_demand else "no CUDA work was seen"
        return "%s: no trace written in %s/: %s" % (me, folder, why)
    names = ", ".join(os.path.basename(t) for t in traces[:3]) + (", ..." if len(traces) > 3 else "")
    line = "%s: wrote %d trace%s in %s/: %s" % (me, len(traces), "" if len(traces) == 1 else "s", folder, names)
    capture = capture_of(gsanalyze, traces[0])
    return line + (" (capture %s)" % capture if capture else "")


def wait_for_exit(pid):
    """Returns when process `pid` (not our child) has ended."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        fd = None
    if fd is not None:
        try:
            select.select([fd], [], [])
        finally:
            os.close(fd)
        return
    while True:  # kernels before 5.3: the process is gone or a zombie
        try:
            with open("/proc/%d/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return
        except (OSError, IndexError):
            return
        time.sleep(0.2)


def start_exit_reporter(me, plan, gsanalyze, on_demand):
    """Before exec: a process of ours (detached: not the command's child, not in its process group
    or session) that waits for this pid, which is about to become the command, and then prints
    exit_report on stderr. Returns once it watches, so even an instant command is seen to end."""
    if "%" in plan["trace_dir"]:
        return  # the folder depends on the process (%p, %h, ...): nothing to list
    before = list_traces(plan)
    target = os.getpid()
    ready_r, ready_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    first = os.fork()
    if first == 0:
        try:
            os.close(ready_r)
            os.setsid()
            if os.fork() != 0:
                os._exit(0)
            devnull = os.open(os.devnull, os.O_RDWR)
            os.dup2(devnull, 0)
            os.dup2(devnull, 1)
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
                signal.signal(sig, signal.SIG_IGN)
            try:
                fd = os.pidfd_open(target)
            except (AttributeError, OSError):
                fd = None
            os.write(ready_w, b"1")
            os.close(ready_w)
            if fd is not None:
                select.select([fd], [], [])
            else:
                wait_for_exit(target)
            line = exit_report(me, plan, before, gsanalyze, on_demand)
            os.write(2, (line + "\n").encode(errors="replace"))
        except BaseException:
            pass
        os._exit(0)
    os.close(ready_w)
    os.waitpid(first, 0)
    os.read(ready_r, 1)  # "" if it failed before watching: then there is no report
    os.close(ready_r)


def from_terminal():
    """Is our process group the terminal's foreground one? (Ctrl-C then reached the child too.)"""
    try:
        fd = os.open("/dev/tty", os.O_RDONLY)
    except OSError:
        return False
    try:
        return os.tcgetpgrp(fd) == os.getpgrp()
    except OSError:
        return False
    finally:
        os.close(fd)


def run_and_analyze(o, prog, env, plan, gsanalyze):
    before = list_traces(plan)
    child = None
    pending = []

    def forward(signum, _frame):
        if child is None:
            pending.append(signum)
            return
        if signum == signal.SIGINT and from_terminal():
            return
        try:
            child.send_signal(signum)
        except OSError:
            pass

    for name in FORWARDED_SIGNALS:
        signal.signal(getattr(signal, name), forward)
    # restore_signals: the child gets SIGPIPE/SIGXFSZ as a shell would give them.
    child = subprocess.Popen(o.command, env=env, restore_signals=True)
    for signum in pending:
        forward(signum, None)
    while True:
        try:
            status = child.wait()
            break
        except InterruptedError:
            continue
    traces = sorted(list_traces(plan) - before)
    if not traces:
        print("%s: --analyze: no new trace matching %s (did the command use CUDA?)" % (prog, plan["gs_output"]),
              file=sys.stderr)
    else:
        print("%s: --analyze: gsanalyze report on %d trace(s) in %s/" % (prog, len(traces), plan["trace_dir"]),
              file=sys.stderr)
        sys.stderr.flush()
        rc = subprocess.call([gsanalyze, "report"] + traces, stdout=sys.stderr, stdin=subprocess.DEVNULL)
        if rc != 0:
            print("%s: --analyze: gsanalyze exited %d" % (prog, rc), file=sys.stderr)
    return 128 - status if status < 0 else status


def main(argv, prog="gpustall run"):
    try:
        o = parse(argv, prog)
        env = dict(os.environ)
        gsanalyze = None
        if o.analyze:
            gsanalyze = o.gsanalyze or native.locate().gsanalyze
            if not (os.path.isfile(gsanalyze) and os.access(gsanalyze, os.X_OK)):
                raise UsageError("--analyze: gsanalyze '%s' not found or not executable" % gsanalyze)
        plan, messages = prepare(o, prog, env)
    except UsageError as e:
        print("%s: %s" % (prog.split()[0], e), file=sys.stderr)
        return 2
    me = prog.split()[0]
    if not o.quiet:
        for m in messages:
            print("%s: %s" % (me, m), file=sys.stderr)
    if not o.analyze:
        if not o.quiet and plan.get("rank", "") in ("", "0"):
            start_exit_reporter(me, plan, o.gsanalyze or native.locate().gsanalyze,
                                env.get("GS_ON_DEMAND", "0") not in ("", "0"))
        native.default_signals()
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            os.execvpe(o.command[0], o.command, env)
        except OSError as e:
            print("%s: cannot run '%s': %s" % (me, o.command[0], e.strerror), file=sys.stderr)
            return 127
    return run_and_analyze(o, me, env, plan, gsanalyze)
