#!/usr/bin/python3
"""kineto_hta_test.py -- on a real PyTorch profiler trace, Holistic Trace Analysis and
`gsanalyze report --json` agree on the device's idle time (ctest kineto.hta.<trace>).

    kineto_hta_test.py --gsanalyze BIN --venv-python PY --work-dir DIR TRACE

HTA 0.5.0 (the test venv's) loads TRACE and computes get_temporal_breakdown(); its idle_time is
the span from the first to the last event on a GPU stream less their union, which is gsanalyze's
steady-state idle (devices[].steady_idle_ns) for a trace of one device once both look at the same
events. Two settings make them the same, and the test checks that they are (HTA's counts of
kernels, copies and memsets == the JSON's == gsanalyze's):
  - include_last_profiler_step=True: by default HTA drops the device work launched in the last
    ProfilerStep#N (an incomplete step); gsanalyze analyses all of it;
  - cuda_sync events are removed from HTA's frame before the breakdown: HTA counts every event that
    has a stream, and these are CUPTI's records of a host waiting on a stream, not device work.
HTA runs with HTA_DISABLE_NS_ROUNDING=1 so that both keep the trace's nanoseconds.
Tolerance: 0.1%, plus 0.01 µs for float64 microseconds (the real traces agree exactly).
Also checked without HTA: gsanalyze's counts of kernels, copies and memsets equal the JSON's.
Exit 0 pass, 1 fail, 77 (ctest SKIP) when the test venv's interpreter does not exist.
"""
import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "testlib"))
from gstest import check, exit_status  # noqa: E402  (tests/testlib)

SKIP = 77
LEGACY = {"Kernel": "kernel", "Memcpy": "gpu_memcpy", "Memset": "gpu_memset"}  # PyTorch 1.8-1.10

HTA_SCRIPT = r"""
import json, logging, sys, warnings
warnings.simplefilter("ignore")
from hta.configs.config import logger
logger.setLevel(logging.ERROR)
from hta.trace_analysis import TraceAnalysis
a = TraceAnalysis(trace_dir=sys.argv[1], include_last_profiler_step=True)
names = a.t.symbol_table.get_sym_table()
counts = {}
for rank, df in a.t.traces.items():
    cats = df[df["stream"].ne(-1)]["cat"].map(lambda c: names[c])
    cats = cats.replace({"Kernel": "kernel", "Memcpy": "gpu_memcpy", "Memset": "gpu_memset"})  # 1.8-1.10
    counts[str(rank)] = {c: int((cats == c).sum()) for c in ("kernel", "gpu_memcpy", "gpu_memset")}
    sync = [i for i, n in enumerate(names) if n == "cuda_sync"]
    a.t.traces[rank] = df[~df["cat"].isin(sync)]
t = a.get_temporal_breakdown(visualize=False)
json.dump({"idle_us": {str(int(r["rank"])): float(r["idle_time(us)"]) for _, r in t.iterrows()},
           "counts": counts}, sys.stdout)
"""


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gsanalyze", required=True)
    p.add_argument("--venv-python", required=True)
    p.add_argument("--work-dir", required=True)
    p.add_argument("trace")
    args = p.parse_args()
    if not os.path.exists(args.venv_python):
        print("SKIP: no test venv (%s): run tools/setup" % args.venv_python)
        return SKIP

    with gzip.open(args.trace, "rt") if args.trace.endswith(".gz") else open(args.trace) as f:
        doc = json.load(f)
    cats = {"kernel": 0, "gpu_memcpy": 0, "gpu_memset": 0}
    for e in doc["traceEvents"]:
        cat = LEGACY.get(e.get("cat"), e.get("cat"))
        if e.get("ph") == "X" and cat in cats:
            cats[cat] += 1
    rank = str(doc.get("distributedInfo", {}).get("rank", 0))

    r = subprocess.run([args.gsanalyze, "report", "--json", args.trace], capture_output=True, text=True, timeout=300)
    if not check(r.returncode == 0, "gsanalyze exited %d: %s" % (r.returncode, r.stderr[-2000:])):
        return exit_status()
    report = json.loads(r.stdout)
    devices = report["devices"]
    check(len(devices) == 1, "one device expected, gsanalyze found %d" % len(devices))
    d = devices[0]
    check(d["kernels"] == cats["kernel"], "kernels: gsanalyze %d, JSON %d" % (d["kernels"], cats["kernel"]))
    check(d["copies"] == cats["gpu_memcpy"], "copies: gsanalyze %d, JSON %d" % (d["copies"], cats["gpu_memcpy"]))
    check(d["memsets"] == cats["gpu_memset"], "memsets: gsanalyze %d, JSON %d" % (d["memsets"], cats["gpu_memset"]))

    shutil.rmtree(args.work_dir, ignore_errors=True)
    os.makedirs(args.work_dir)
    shutil.copy(args.trace, args.work_dir)
    env = dict(os.environ, HTA_DISABLE_NS_ROUNDING="1")
    h = subprocess.run([args.venv_python, "-c", HTA_SCRIPT, args.work_dir], env=env, capture_output=True, text=True,
                       timeout=300)
    if not check(h.returncode == 0, "HTA failed (exit %d):\n%s" % (h.returncode, h.stderr[-4000:])):
        return exit_status()
    out = json.loads(h.stdout)
    hta_idle = out["idle_us"]
    check(out["counts"].get(rank) == cats, "HTA's device events %s are not the JSON's %s" % (out["counts"].get(rank), cats))
    if check(rank in hta_idle, "HTA has no rank %s: %s" % (rank, hta_idle)):
        ours = d["steady_idle_ns"] / 1000.0
        theirs = hta_idle[rank]
        print("steady-state idle: gsanalyze %.3f us, HTA %.3f us" % (ours, theirs))
        check(abs(ours - theirs) <= 0.01 + 0.001 * max(ours, theirs),
              "idle differs by more than 0.1%%: gsanalyze %.3f us, HTA %.3f us" % (ours, theirs))
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
