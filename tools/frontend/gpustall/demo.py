"""gpustall demo: the data-starved training loop on the bundled simulated GPU, then its report.

The workload is tests/workloads/py/data_starved.py (shipped in the wheel): the host prepares every
batch in load_batch() (20 ms of Python CPU work) while a step's GPU work takes 5 ms, so the GPU
idles waiting for input. It runs under the agent through `gpustall run --simgpu` (the same code
path as a real job), and the report says so: GPU busy ~20%, the idle time owned by load_batch.
"""
import os
import subprocess
import sys
import tempfile

from gpustall import native

USAGE = """usage: {prog} [--json] [--keep DIR] [--steps N]

Runs a data-starved training loop (Python) on the simulated GPU bundled with gpustall under the
agent, then prints gsanalyze's report of its trace. No GPU needed.
  --json      the report as JSON
  --keep DIR  keep the trace (and simgpu's ground truth) in DIR
  --steps N   training steps (default 40)
"""


def main(argv, prog="gpustall demo"):
    me = prog.split()[0]
    json_report, keep, steps = False, None, "40"
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            print(USAGE.format(prog=prog), end="")
            return 0
        if a == "--json":
            json_report = True
        elif a in ("--keep", "--steps") and i + 1 < len(argv):
            i += 1
            if a == "--keep":
                keep = argv[i]
            else:
                steps = argv[i]
        else:
            print("%s: unknown argument '%s' (try %s --help)" % (me, a, prog), file=sys.stderr)
            return 2
        i += 1
    n = native.locate()
    workload = os.path.join(n.workloads, "data_starved.py")
    if not os.path.isfile(workload):
        print("%s: the demo workload %s is missing" % (me, workload), file=sys.stderr)
        return 2
    folder = os.path.abspath(keep) if keep else tempfile.mkdtemp(prefix="gpustall-demo-")
    os.makedirs(folder, exist_ok=True)
    trace = os.path.join(folder, "data_starved.gstrace")
    if os.path.exists(trace):
        os.unlink(trace)
    env = dict(os.environ, SIMGPU_TRUTH=os.path.join(folder, "truth.jsonl"))
    print("%s: running data_starved.py (%s steps) on the simulated GPU under libgsagent.so" % (me, steps),
          file=sys.stderr)
    cmd = [sys.executable, "-m", "gpustall", "run", "-q", "--simgpu", "-o", trace, "--",
           sys.executable, workload, "--steps", steps]
    rc = subprocess.call(cmd, env=env, stdout=sys.stderr)
    if rc != 0 or not os.path.exists(trace):
        print("%s: the demo workload failed (exit %d)" % (me, rc), file=sys.stderr)
        return 1
    print(file=sys.stderr)
    report = subprocess.call([n.gsanalyze, "report"] + (["--json"] if json_report else []) + [trace])
    if keep:
        print("%s: trace kept in %s" % (me, trace), file=sys.stderr)
    else:
        for f in os.listdir(folder):
            os.unlink(os.path.join(folder, f))
        os.rmdir(folder)
    return report
