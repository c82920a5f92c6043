#!/usr/bin/python3
"""tty_test.py -- gsanalyze's terminal behaviour under a real pseudo-terminal (ctest analyzer.cli.tty.*).

    tty_test.py colour|progress|progress_json --gsanalyze BIN --traces-tool BIN --work-dir DIR [--events N]

colour    `report` of a small trace: ANSI colour on a tty; none with NO_COLOR=1 (or any non-empty
          value); colour again with NO_COLOR="" (https://no-color.org: only non-empty disables);
          none when stdout is a pipe, even with stderr on a tty.
progress  `report` of a large synthetic trace (N records, long enough to pass the 300 ms delay):
          on a tty the "analysing large.gstrace  NN%" line appears on stderr and is erased (blanks
          and "\\r") before the report begins; with stderr a pipe it never appears; a small trace
          on a tty (a quick analysis) shows none.
progress_json  the same for a large PyTorch profiler JSON trace (150 MB, written here), whose
          parse is most of its time: the line shows percentages below 100 while the JSON is read.
Standard library only. Exit 0 pass, 1 fail.
"""
import argparse
import os
import pty
import re
import select
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "testlib"))
from gstest import check, exit_status  # noqa: E402  (tests/testlib)

ESC = "\x1b["


def run_on_tty(cmd, env, stdout_pipe=False):
    """Runs cmd with stderr (and stdout unless stdout_pipe) on a new pty; returns (tty bytes, pipe bytes, rc)."""
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stderr=slave,
                         stdout=subprocess.PIPE if stdout_pipe else slave, close_fds=True)
    os.close(slave)
    tty = b""
    while True:
        try:
            ready, _, _ = select.select([master], [], [], 120)
            if not ready:
                break
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed its end
            break
        if not chunk:
            break
        tty += chunk
    piped = p.stdout.read() if stdout_pipe else b""
    rc = p.wait(timeout=120)
    os.close(master)
    return tty.decode("utf-8", "replace"), piped.decode("utf-8", "replace"), rc


def env_with(**changes):
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS")}
    env.update(changes)
    return env


def colour(args, small):
    cmd = [args.gsanalyze, "report", small]
    out, _, rc = run_on_tty(cmd, env_with())
    check(rc == 0, "report on a tty exited %d" % rc)
    check(ESC in out, "no ANSI colour on a tty:\n" + out[:500])
    check(out.count(ESC) >= 4, "too little colour on a tty (%d escapes)" % out.count(ESC))
    for value in ("1", "0", "yes"):
        out, _, _ = run_on_tty(cmd, env_with(NO_COLOR=value))
        check(ESC not in out, "colour despite NO_COLOR=%r:\n%s" % (value, out[:500]))
    out, _, _ = run_on_tty(cmd, env_with(NO_COLOR=""))
    check(ESC in out, "no colour with NO_COLOR empty (only a non-empty value disables)")
    tty, piped, rc = run_on_tty(cmd, env_with(), stdout_pipe=True)
    check(rc == 0 and "Data loss" in piped, "report into a pipe failed (exit %d)" % rc)
    check(ESC not in piped, "colour in a pipe:\n" + piped[:500])
    p = subprocess.run(cmd, env=env_with(), capture_output=True, text=True)
    check(ESC not in p.stdout and ESC not in p.stderr, "colour with stdout and stderr pipes")
    print("colour: tty %d escapes; NO_COLOR and pipes none" % run_on_tty(cmd, env_with())[0].count(ESC))


def progress(args, small, large):
    out, _, rc = run_on_tty([args.gsanalyze, "report", large], env_with())
    check(rc == 0, "report of the large trace on a tty exited %d" % rc)
    lines = re.findall(r"\ranalysing large\.gstrace +(\d+)%", out)
    check(lines, "no progress line on a tty:\n" + out[:300])
    report_at = out.find("Data loss")
    last = out.rfind("\ranalysing")
    if lines and report_at >= 0:
        check(last < report_at, "progress drawn after the report began")
        erased = re.search(r"\r +\r", out[last:report_at])
        check(erased is not None, "the progress line was not erased before the report: %r"
              % out[last:report_at][:200])
    print("progress on a tty: %d redraws, last at %s%%" % (len(lines), lines[-1] if lines else "-"))
    p = subprocess.run([args.gsanalyze, "report", large], env=env_with(), capture_output=True, text=True)
    check(p.returncode == 0, "report into pipes exited %d" % p.returncode)
    check("analysing" not in p.stderr and "\r" not in p.stderr, "progress in a pipe: %r" % p.stderr[:300])
    tty, piped, _ = run_on_tty([args.gsanalyze, "report", large], env_with(), stdout_pipe=True)
    check("\ranalysing" in tty, "no progress on a tty stderr when stdout is a pipe")
    check("analysing" not in piped, "progress leaked into stdout")
    out, _, _ = run_on_tty([args.gsanalyze, "report", small], env_with())
    check("analysing" not in out, "a quick analysis drew a progress line")


def write_big_json(path, megabytes):
    """A PyTorch profiler trace of `megabytes` MB: one launch and two kernels, and between them
    annotations the importer reads past (what makes the parse, not the analysis, take the time)."""
    filler = ('{"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#1 forward backward", '
              '"pid": 0, "tid": 7, "ts": 1000.5, "dur": 3.25, "args": {"External id": 12345, "device": 0}},\n')
    with open(path, "w") as f:
        f.write('{"schemaVersion": 1, "traceEvents": [\n'
                '{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 900, '
                '"dur": 5, "args": {"correlation": 1}},\n'
                '{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 910, "dur": 50, '
                '"args": {"correlation": 1, "device": 0, "stream": 7}},\n')
        chunk = filler * 10000
        for _ in range(megabytes * 1000000 // len(chunk)):
            f.write(chunk)
        f.write('{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 2000, "dur": 50, '
                '"args": {"device": 0, "stream": 7}}]}\n')


def progress_json(args, small, big):
    out, _, rc = run_on_tty([args.gsanalyze, "report", big], env_with())
    check(rc == 0, "report of the large JSON trace on a tty exited %d" % rc)
    shown = [int(p) for p in re.findall(r"\ranalysing big\.json +(\d+)%", out)]
    check(any(p < 100 for p in shown), "no progress line while the JSON was parsed (percentages %r):\n%s"
          % (shown, out[:300]))
    report_at = out.find("Data loss")
    last = out.rfind("\ranalysing")
    if shown and report_at >= 0:
        check(last < report_at, "progress drawn after the report began")
        check(re.search(r"\r +\r", out[last:report_at]) is not None, "the progress line was not erased")
    print("JSON progress on a tty: percentages %r" % shown)
    p = subprocess.run([args.gsanalyze, "report", big], env=env_with(), capture_output=True, text=True)
    check(p.returncode == 0 and "analysing" not in p.stderr and "\r" not in p.stderr,
          "progress in a pipe (exit %d): %r" % (p.returncode, p.stderr[:300]))
    out, _, _ = run_on_tty([args.gsanalyze, "report", small], env_with())
    check("analysing" not in out, "a quick JSON analysis drew a progress line")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("colour", "progress", "progress_json"))
    ap.add_argument("--gsanalyze", required=True)
    ap.add_argument("--traces-tool", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--events", type=int, default=12000000)
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    if args.mode == "progress_json":
        big = os.path.join(args.work_dir, "big.json")
        write_big_json(big, 150)
        here = os.path.dirname(os.path.abspath(__file__))
        progress_json(args, os.path.join(here, "..", "..", "import", "kineto", "testdata", "a100_triton.json.gz"), big)
        os.remove(big)
        return exit_status()
    events = args.events if args.mode == "progress" else 1000
    p = subprocess.run([args.traces_tool, args.work_dir, str(events)], capture_output=True, text=True)
    if not check(p.returncode == 0, "trace tool failed: %s" % p.stderr):
        return exit_status()
    print(p.stdout.strip())
    small = os.path.join(args.work_dir, "small.gstrace")
    large = os.path.join(args.work_dir, "large.gstrace")
    if args.mode == "colour":
        colour(args, small)
    else:
        progress(args, small, large)
    for f in (small, large):
        if os.path.exists(f):
            os.remove(f)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
