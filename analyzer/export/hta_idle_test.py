#!/usr/bin/python3
"""hta_idle_test.py -- Holistic Trace Analysis reads `gsanalyze export --kineto` and agrees with
gsanalyze where the two define the same number (ctest export.hta.<workload>).

    hta_idle_test.py --gsanalyze BIN --agent libgsagent.so --simgpu-lib DIR
                     --venv-python PY --work-dir DIR -- COMMAND...

Runs COMMAND (a simgpu workload) under the agent, exports its trace with --kineto, runs HTA 0.5.0
(hta_breakdown.py on the test venv's interpreter) and compares with `gsanalyze report --json`:

  loads        HTA finds rank 0 (distributedInfo) and every kernel/copy/memset gsanalyze counted,
               each linked to its runtime call by correlation (index_correlation > 0);
  device idle  HTA's temporal breakdown idle_time == devices[0].steady_idle_ns: both are the span
               first device op start -> last device op end less the union of device work;
  stream idle  per stream, HTA's idle breakdown summed over its categories == the idle time of
               gsanalyze's intervals (the export's gpustall_idle events) inside that stream's span,
               for every stream that was the only one with work inside its span (elsewhere
               "device idle" and "stream idle" are different quantities);
  rounding     with HTA's default rounding of ns timestamps to whole µs (ceil start, floor end),
               the device idle grows by at most 2 µs per device op: checked as a bound.
Tolerance where the definitions agree: 0.01 µs + 1e-9 relative (float64 µs in JSON); HTA runs with
HTA_DISABLE_NS_ROUNDING=1 for those checks. HTA's host-wait/kernel-wait/other split is not
compared: it is not gsanalyze's cause split (README.md, "Kineto export and HTA").
Exit 0 pass, 1 fail, 77 (ctest SKIP) when the test venv's interpreter does not exist.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "testlib"))
from gstest import check, exit_status, fail  # noqa: E402  (tests/testlib)

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))


def close(a_us, b_us):
    return abs(a_us - b_us) <= 0.01 + 1e-9 * max(abs(a_us), abs(b_us))


def run_workload(args, work):
    out_dir = os.path.join(work, "out")
    os.makedirs(out_dir)
    env = dict(os.environ)
    for k in list(env):
        if k.startswith(("GS_", "SIMGPU_")) or k in ("LD_PRELOAD", "CUDA_INJECTION64_PATH"):
            del env[k]
    env.update(LD_LIBRARY_PATH=args.simgpu_lib, LD_PRELOAD=args.agent, GS_OUTPUT=out_dir + "/",
               PYTHONDONTWRITEBYTECODE="1")
    print("run: " + " ".join(args.command), flush=True)
    p = subprocess.run(args.command, env=env, capture_output=True, text=True, timeout=180)
    if not check(p.returncode == 0, "workload exited %d: %s" % (p.returncode, p.stderr[-2000:])):
        return None
    traces = sorted(glob.glob(os.path.join(out_dir, "*.gstrace")))
    if not check(len(traces) == 1, "expected one trace in %s, found %s" % (out_dir, traces)):
        return None
    return traces[0]


def hta(args, trace_dir, rounding):
    env = dict(os.environ)
    env.pop("HTA_DISABLE_NS_ROUNDING", None)
    if not rounding:
        env["HTA_DISABLE_NS_ROUNDING"] = "1"
    p = subprocess.run([args.venv_python, os.path.join(HERE, "hta_breakdown.py"), trace_dir], env=env,
                       capture_output=True, text=True, timeout=300)
    if not check(p.returncode == 0, "HTA failed (exit %d):\n%s" % (p.returncode, p.stderr[-4000:])):
        return None
    return json.loads(p.stdout)


def stream_spans(events):
    """{stream: (first start, last end, [(start, end)...])} of the exported device work (µs)."""
    spans = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            s = e["args"]["stream"]
            start, end = e["ts"], e["ts"] + e["dur"]
            lo, hi, ops = spans.get(s, (start, end, []))
            ops.append((start, end))
            spans[s] = (min(lo, start), max(hi, end), ops)
    return spans


def idle_inside(idle, lo, hi):
    return sum(max(0.0, min(e, hi) - max(s, lo)) for s, e in idle)


def main():
    argv = sys.argv[1:]
    command = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser()
    ap.add_argument("--gsanalyze", required=True)
    ap.add_argument("--agent", required=True)
    ap.add_argument("--simgpu-lib", required=True)
    ap.add_argument("--venv-python", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--expect-lone-stream", action="store_true",
                    help="fail unless some stream ran alone in its span (the per-stream check ran)")
    args = ap.parse_args(argv)
    args.command = command
    if not command:
        ap.error("give the workload's command after --")
    if not os.path.exists(args.venv_python):
        print("SKIP: no test venv at %s (tools/setup makes it, with holistictraceanalysis==0.5.0)"
              % args.venv_python)
        return SKIP

    work = args.work_dir
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    trace = run_workload(args, work)
    if trace is None:
        return exit_status()
    trace_dir = os.path.join(work, "kineto")
    os.makedirs(trace_dir)
    kineto = os.path.join(trace_dir, "rank0.json")  # HTA reads every *.json in the folder
    p = subprocess.run([args.gsanalyze, "export", "--kineto", kineto, trace], capture_output=True,
                       text=True, timeout=120)
    if not check(p.returncode == 0, "export --kineto exited %d: %s" % (p.returncode, p.stderr)):
        return exit_status()
    print(p.stdout.strip())
    p = subprocess.run([args.gsanalyze, "report", "--json", trace], capture_output=True, text=True,
                       timeout=120)
    if not check(p.returncode == 0, "report --json exited %d: %s" % (p.returncode, p.stderr)):
        return exit_status()
    report = json.loads(p.stdout)
    if not check(len(report["devices"]) == 1, "expected one device, got %d" % len(report["devices"])):
        return exit_status()
    dev = report["devices"][0]
    with open(kineto) as f:
        events = json.load(f)["traceEvents"]
    idle = [(e["ts"], e["ts"] + e["dur"]) for e in events
            if e.get("ph") == "X" and e.get("cat") == "gpustall_idle"]
    spans = stream_spans(events)

    exact = hta(args, trace_dir, rounding=False)
    rounded = hta(args, trace_dir, rounding=True)
    if exact is None or rounded is None:
        return exit_status()

    ops = dev["kernels"] + dev["copies"] + dev["memsets"]
    check(exact["ranks"] == [0], "HTA ranks %s, expected [0] (distributedInfo)" % exact["ranks"])
    check(exact["gpu_events"] == ops, "HTA sees %d GPU events, gsanalyze counted %d kernels+copies+"
          "memsets" % (exact["gpu_events"], ops))
    check(exact["kernels_linked"] == exact["gpu_events"],
          "HTA linked %d of %d GPU events to a runtime call" % (exact["kernels_linked"], exact["gpu_events"]))

    gs_idle_us = dev["steady_idle_ns"] / 1000.0
    hta_idle_us = exact["temporal"]["0"]["idle_us"]
    print("device idle: gsanalyze %.3f us, HTA temporal breakdown %.3f us (exact), %.3f us (HTA's "
          "default µs rounding)" % (gs_idle_us, hta_idle_us, rounded["temporal"]["0"]["idle_us"]))
    check(close(hta_idle_us, gs_idle_us), "device idle: HTA %.3f us != gsanalyze steady_idle_ns %.3f us"
          % (hta_idle_us, gs_idle_us))
    check(close(idle_inside(idle, -1e18, 1e18), gs_idle_us),
          "the export's gpustall_idle events sum to %.3f us, the report says %.3f us"
          % (idle_inside(idle, -1e18, 1e18), gs_idle_us))
    drift = rounded["temporal"]["0"]["idle_us"] - gs_idle_us
    check(-0.01 <= drift <= 2.0 * ops + 0.01,
          "with HTA's µs rounding the idle moved by %.3f us, outside [0, 2 us x %d ops]" % (drift, ops))

    per_stream = {}
    for row in exact["idle"]:
        per_stream[row["stream"]] = per_stream.get(row["stream"], 0.0) + row["idle_time_us"]
        print("HTA stream %d %-11s %12.3f us" % (row["stream"], row["idle_category"], row["idle_time_us"]))
    compared = 0
    for stream, (lo, hi, _) in sorted(spans.items()):
        alone = all(e <= lo or s >= hi for other, (_, _, o) in spans.items() if other != stream for s, e in o)
        if not alone:
            print("stream %d: other streams have work inside its span; not compared" % stream)
            continue
        compared += 1
        mine = idle_inside(idle, lo, hi)
        print("stream %d alone in [%.3f, %.3f] us: gsanalyze %.3f us, HTA %.3f us"
              % (stream, lo, hi, mine, per_stream.get(stream, 0.0)))
        check(close(per_stream.get(stream, 0.0), mine), "stream %d: HTA idle %.3f us != gsanalyze's "
              "idle inside the stream's span %.3f us" % (stream, per_stream.get(stream, 0.0), mine))
    if compared == 0 and args.expect_lone_stream:
        fail("no stream ran alone in its span: the per-stream comparison never ran (pick a workload "
             "with a stream of its own)")
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
