"""gpustall start|stop|status|list -- capture windows in running processes (`gpustall run --on-demand`).

    gpustall list
    gpustall status [--pid PID | --job JOB]
    gpustall start  [--duration 30s] [--pid PID | --job JOB]
    gpustall stop   [--pid PID | --job JOB]

(tools/gsctl is the same code under the name gsctl.) A process started with
`gpustall run --on-demand` (GS_ON_DEMAND=1) loads the agent dormant: nothing is
recorded until a window starts. Once it uses CUDA it listens on ${XDG_RUNTIME_DIR or
/tmp}/gpustall-<uid>/<pid>.sock, a folder only its user can open; the agent also checks every
caller's uid. Each window is a complete trace of its own (<trace>.window-N.gstrace, next to where
the process would have written its trace) that `gsanalyze report` reads like any other.

Which processes: --pid PID, or every process of job JOB on this host (--job), or, with neither,
every listening process of this user on this host (when they all belong to one job).

The wire protocol is one line each way (agent/control/command.h): `status`, `start
[DURATION_NS]`, `stop`; answers start with `ok` or `error`. Python 3 standard library only. The run folder is the
agent's own answer (gs_agent_env run-folder), not a copy of its rule.
"""

import argparse
import os
import re
import socket
import stat
import subprocess
import sys

from gpustall import __version__ as VERSION, native

ME = "gpustall"  # main(prog=...) sets it: "gsctl" through tools/gsctl
REPLY_TIMEOUT_S = 10.0  # a window start opens a file and may start CUPTI: allow for a busy host
UNITS_NS = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9}
MAX_WINDOW_NS = 86400 * 10**9  # the agent refuses longer windows


class Error(Exception):
    """A problem to report as one `gpustall: ...` line."""


def run_hint():
    return "gsrun --on-demand" if ME == "gsctl" else "gpustall run --on-demand"


def run_folder():
    """Where the agent listens: asked of the agent's own code (agent/control/run_folder.cc)."""
    agent_env = native.locate().agent_env
    try:
        out = subprocess.run([agent_env, "run-folder"], stdout=subprocess.PIPE, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise Error("cannot ask %s for the run folder: %s" % (agent_env, e))
    return out.decode().strip()


def check_run_folder(folder):
    """The folder must be ours and private, or we would be talking to whoever made it.
    Returns False when it does not exist (no process has listened yet)."""
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(st.st_mode):
        raise Error("run folder %s is a symbolic link; refusing it" % folder)
    if not stat.S_ISDIR(st.st_mode):
        raise Error("run folder %s is not a directory; refusing it" % folder)
    if st.st_uid != os.geteuid():
        raise Error("run folder %s is owned by uid %d, not %d; refusing it" % (folder, st.st_uid, os.geteuid()))
    if stat.S_IMODE(st.st_mode) != 0o700:
        raise Error("run folder %s has mode %04o, expected 0700; refusing it" % (folder, stat.S_IMODE(st.st_mode)))
    return True


def parse_duration(text):
    """'30s', '500ms', '2m', '1h', '250us', '10ns'; a bare number is seconds. Returns ns."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(ns|us|ms|s|m|h)?\s*", text)
    if not m:
        raise argparse.ArgumentTypeError("'%s' is not a duration (e.g. 30s, 500ms, 2m)" % text)
    ns = int(round(float(m.group(1)) * UNITS_NS[m.group(2) or "s"]))
    if ns <= 0 or ns > MAX_WINDOW_NS:
        raise argparse.ArgumentTypeError("'%s': a window lasts more than 0 and at most 24h" % text)
    return ns


def format_ns(ns):
    for unit in ("h", "m", "s", "ms", "us"):
        if ns >= UNITS_NS[unit] and ns % UNITS_NS[unit] == 0:
            return "%d%s" % (ns // UNITS_NS[unit], unit)
    return "%dns" % ns


def ask(path, request):
    """One request line, one reply line. Raises OSError (connect) or Error (protocol)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(REPLY_TIMEOUT_S)
        s.connect(path)
        try:
            s.sendall((request + "\n").encode())
            s.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before it read the request (another uid): its answer is waiting
        data = b""
        while not data.endswith(b"\n"):
            try:
                chunk = s.recv(4096)
            except socket.timeout:
                raise Error("no answer within %gs" % REPLY_TIMEOUT_S)
            if not chunk:
                break
            data += chunk
    line = data.decode(errors="replace").strip()
    if line.startswith("ok"):
        return parse_facts(line[2:].strip())
    if line.startswith("error "):
        raise Error(line[len("error "):])
    raise Error("unexpected answer %r" % line[:200])


def parse_facts(text):
    """key=value words; `command=` takes the rest of the line (it may contain spaces)."""
    facts = {}
    head, sep, command = text.partition("command=")
    if sep and (not head or head.endswith(" ")):
        facts["command"] = command
        text = head
    for word in text.split():
        key, _, value = word.partition("=")
        facts[key] = value
    return facts


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def discover(folder):
    """Every live listener of this user: [(pid, socket path, status facts)], sorted by pid.
    Sockets of dead processes (killed before the agent could remove them) are removed."""
    if not check_run_folder(folder):
        return []
    found = []
    for name in sorted(os.listdir(folder)):
        m = re.fullmatch(r"([0-9]+)\.sock", name)
        if not m:
            continue
        pid, path = int(m.group(1)), os.path.join(folder, name)
        stale = not pid_alive(pid)
        facts = None
        if not stale:
            try:
                facts = ask(path, "status")
            except ConnectionRefusedError:
                stale = True  # nobody listens: its process died and the pid was reused
            except (OSError, Error) as e:
                facts = {"pid": str(pid), "state": "unreachable(%s)" % e}
        if stale:
            try:
                os.unlink(path)
                print("%s: removed the stale socket of process %d (no longer running)" % (ME, pid),
                      file=sys.stderr)
            except OSError:
                pass
            continue
        found.append((pid, path, facts))
    found.sort()
    return found


def targets(args):
    """[(pid, path)] that the command acts on, per --socket/--pid/--job or all of one job."""
    if args.socket:
        return [(None, args.socket)]
    folder = run_folder()
    listeners = discover(folder)
    if args.pid is not None:
        for pid, path, _ in listeners:
            if pid == args.pid:
                return [(pid, path)]
        raise Error("process %d is not listening in %s (is it running under `%s`, "
                    "and has it used CUDA yet?)" % (args.pid, folder, run_hint()))
    if not listeners:
        raise Error("no process of this user is listening in %s (start one with `%s`; "
                    "it listens once it uses CUDA)" % (folder, run_hint()))
    if args.job is not None:
        chosen = [(pid, path) for pid, path, facts in listeners if facts.get("job") == args.job]
        if not chosen:
            jobs = sorted({facts.get("job", "-") for _, _, facts in listeners})
            raise Error("no listening process of job %s here (jobs listening: %s)" % (args.job, ", ".join(jobs)))
        return chosen
    jobs = sorted({facts.get("job", "-") for _, _, facts in listeners})
    if len(jobs) > 1:
        raise Error("processes of several jobs are listening (%s): say --job JOB or --pid PID" % ", ".join(jobs))
    return [(pid, path) for pid, path, _ in listeners]


def label(pid, path):
    return "process %d" % pid if pid is not None else path


def cmd_list(args):
    listeners = discover(run_folder()) if not args.socket else [(None, args.socket, ask(args.socket, "status"))]
    if not listeners:
        print("no process of this user is listening in %s" % run_folder())
        return 0
    rows = [("PID", "JOB", "RANK", "STATE", "WINDOWS", "COMMAND")]
    for pid, _, facts in listeners:
        rows.append((facts.get("pid", str(pid)), facts.get("job", "-"), facts.get("rank", "-"),
                     facts.get("state", "?"), facts.get("windows", "-"), facts.get("command", "")))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    for r in rows:
        print("  ".join(r[i].ljust(widths[i]) for i in range(5)) + "  " + r[5])
    return 0


def act(args, request, describe):
    failed = 0
    for pid, path in targets(args):
        try:
            facts = ask(path, request)
        except (OSError, Error) as e:
            print("%s: %s: %s" % (ME, label(pid, path), e), file=sys.stderr)
            failed += 1
            continue
        print("%s: %s" % (label(pid, path), describe(facts)))
    return 1 if failed else 0


def cmd_start(args):
    request = "start" if args.duration is None else "start %d" % args.duration

    def describe(f):
        until = " for %s" % format_ns(args.duration) if args.duration else " until `%s stop`" % ME
        return "window %s recording to %s%s" % (f.get("window", "?"), f.get("trace", "?"), until)
    return act(args, request, describe)


def cmd_stop(args):
    return act(args, "stop", lambda f: "window %s written to %s (%s bytes)" % (
        f.get("window", "?"), f.get("trace", "?"), f.get("bytes", "?")))


def cmd_status(args):
    def describe(f):
        text = "%s, %s window(s)" % (f.get("state", "?"), f.get("windows", "0"))
        if "trace" in f:
            text += ", %s %s" % ("recording to" if f.get("state") == "recording" else "last", f["trace"])
        return text
    return act(args, "status", describe)


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog=ME, description="Start and stop gpustall capture windows in running processes "
        "(started with `gpustall run --on-demand`).")
    parser.add_argument("--version", action="version", version="%s (gpustall) %s" % (ME, VERSION))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    def add(name, text):
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument("--socket", help=argparse.SUPPRESS)  # one socket by path (tests, debugging)
        return p

    def add_targets(p):
        group = p.add_mutually_exclusive_group()
        group.add_argument("--pid", type=int, help="this process only")
        group.add_argument("--job", help="every listening process of job JOB on this host")

    add("list", "list this user's listening processes (pid, job, rank, state, windows, command)")
    p = add("status", "say whether each process is recording, and its last window")
    add_targets(p)
    p = add("start", "start a capture window")
    p.add_argument("--duration", type=parse_duration,
                   help="stop by itself after this long (30s, 500ms, 2m; default: until `%s stop`)" % ME)
    add_targets(p)
    p = add("stop", "stop the capture window and finish its trace")
    add_targets(p)
    args = parser.parse_args(argv)
    for name in ("pid", "job", "duration"):
        if not hasattr(args, name):
            setattr(args, name, None)
    return args


def main(argv=None, prog="gpustall"):
    global ME
    ME = prog
    args = parse_args(argv)
    try:
        return {"list": cmd_list, "status": cmd_status, "start": cmd_start, "stop": cmd_stop}[args.command](args)
    except Error as e:
        print("%s: %s" % (ME, e), file=sys.stderr)
        return 2
    except OSError as e:
        print("%s: %s" % (ME, e), file=sys.stderr)
        return 2

