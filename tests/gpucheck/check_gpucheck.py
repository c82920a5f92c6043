#!/usr/bin/env python3
"""check_gpucheck.py — ctest gpucheck.simgpu_quick: tools/gpu-check --simgpu --quick on simgpu.

    check_gpucheck.py --gpu-check tools/gpu-check --build BUILD --simgpu-lib DIR
                      --agent libgsagent.so --gsanalyze gsanalyze --work-dir DIR

Runs gpu-check as a GPU session would (but on simgpu) and checks its results, not its words:
  - it exits 0 and writes summary.md and summary.json;
  - summary.md has a status row for every step (1 tools ... 5 summary), with a known status;
    the PyTorch steps either ran or say "no CUDA PyTorch";
  - the carried tools were found and load (step 1 ok for agent and gsanalyze);
  - every shared-runtime workload has a trace that gsanalyze (run again here, independently)
    reads with exit status 0, and a JSON report beside it that matches that analysis;
  - data_starved's top cause, recomputed here from the report, is host_work, and its
    utilisation is well below 1 (the planted problem is seen);
  - the static-runtime builds compiled (the nvcc command for a real GPU works);
  - kineto_busy (step 4's Chrome-trace arithmetic) on a made-up trace with overlapping kernels on
    two streams, a copy and CPU events: the union and counts it must give are worked out here.
Exit status 0 = pass.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # kineto_busy is imported from the source tree

FAILURES = []


def check(cond, msg):
    if not cond:
        FAILURES.append(msg)
        print("FAIL: " + msg, flush=True)
    return cond


def check_kineto_busy(helpers, work_dir):
    sys.path.insert(0, helpers)
    import kineto_busy
    us = lambda a, b: {"ts": a, "dur": b - a}  # noqa: E731
    events = [dict(ph="X", cat="kernel", name="k1", **us(100.0, 110.0)),
              dict(ph="X", cat="kernel", name="k2", **us(105.5, 120.25)),   # overlaps k1
              dict(ph="X", cat="kernel", name="k3", **us(200.0, 201.0)),
              dict(ph="X", cat="gpu_memcpy", name="c", **us(90.0, 101.0)),
              dict(ph="X", cat="cpu_op", name="aten::mm", **us(0.0, 500.0)),
              dict(ph="i", cat="kernel", name="marker", ts=150.0)]
    path = os.path.join(work_dir, "chrome.json")
    with open(path, "w") as f:
        json.dump({"traceEvents": events}, f)
    got = kineto_busy.summarise(path)
    want = {"kernels": 3, "copies_memsets": 1, "compute_busy_ns": 20250 + 1000,
            "busy_ns": 30250 + 1000, "span_ns": 111000}
    for k, v in want.items():
        check(got.get(k) == v, "kineto_busy %s: got %s, want %s" % (k, got.get(k), v))


def main():
    ap = argparse.ArgumentParser()
    for a in ("--gpu-check", "--build", "--simgpu-lib", "--agent", "--gsanalyze", "--work-dir"):
        ap.add_argument(a, required=True)
    args = ap.parse_args()
    out = os.path.join(args.work_dir, "out")
    shutil.rmtree(args.work_dir, ignore_errors=True)
    os.makedirs(args.work_dir)
    env = dict(os.environ)
    env.pop("OUT", None)
    p = subprocess.run([sys.executable, args.gpu_check, "--simgpu", "--quick", "--build",
                        args.build, "--simgpu-lib", args.simgpu_lib, "--out", out, "--pack",
                        os.path.join(args.work_dir, "gpu-check.tar.gz")],
                       env=env, capture_output=True, text=True, timeout=150)
    print(p.stdout[-4000:], p.stderr[-2000:], sep="\n")
    check(p.returncode == 0, "gpu-check exited %d" % p.returncode)
    md_path, js_path = os.path.join(out, "summary.md"), os.path.join(out, "summary.json")
    if not check(os.path.exists(md_path) and os.path.exists(js_path), "no summary.md/json"):
        return 1
    md = open(md_path).read()
    summary = json.load(open(js_path))
    check(os.path.getsize(os.path.join(args.work_dir, "gpu-check.tar.gz")) > 0, "empty --pack")

    # Every step has a status row in summary.md.
    rows = re.findall(r"^\| (\d [a-z]+) \| ([^|]+) \| ([^|]+) \|", md, re.M)
    statuses = {}
    for step, item, status in rows:
        statuses.setdefault(step, []).append((item.strip(), status.strip()))
    for step in ("1 tools", "2 workloads", "3 torch", "4 compare", "5 summary"):
        check(step in statuses, "summary.md has no row for step '%s'" % step)
    for step, items in statuses.items():
        for item, status in items:
            check(status in ("ok", "FAIL", "WARN", "n/a", "skipped", "built"),
                  "step %s item %s: unknown status %r" % (step, item, status))
    check(os.path.realpath(summary["tools"].get("agent", {}).get("path", ""))
          == os.path.realpath(args.agent), "gpu-check did not use the built agent %s" % args.agent)
    tools = dict(statuses.get("1 tools", []))
    check(tools.get("agent") == "ok" and tools.get("gsanalyze") == "ok",
          "step 1 did not find/load the agent and gsanalyze: %s" % tools)
    for step in ("3 torch", "4 compare"):
        torch_rows = [r for r in re.findall(r"^\| %s \| [^|]+ \| ([^|]+) \| ([^|]*) \|" % step,
                                            md, re.M)]
        check(any(s.strip() == "ok" for s, _ in torch_rows)
              or any("no CUDA PyTorch" in d for _, d in torch_rows),
              "step %s neither ran nor says 'no CUDA PyTorch'" % step)

    # Traces: each shared-runtime workload ran under the agent, and its trace analyses here.
    for shape in ("data_starved", "sync_heavy", "pageable_copies", "well_fed", "under_filled"):
        w = summary["workloads"].get(shape + ".shared", {})
        trace = os.path.join(out, "traces", shape + ".shared.gstrace")
        if not check(os.path.exists(trace), "%s: no trace (%s)" % (shape, w.get("status"))):
            continue
        a = subprocess.run([args.gsanalyze, "report", "--json", trace], capture_output=True,
                           text=True, timeout=60)
        if not check(a.returncode == 0, "%s: gsanalyze exit %d: %s" % (shape, a.returncode,
                                                                       a.stderr[-300:])):
            continue
        mine = json.loads(a.stdout)
        rep_path = os.path.join(out, "reports", shape + ".shared.json")
        if not check(os.path.exists(rep_path), "%s: no JSON report" % shape):
            continue
        theirs = json.load(open(rep_path))
        check(mine["devices"][0]["kernels"] == theirs["devices"][0]["kernels"] > 0,
              "%s: report's kernel count differs from a fresh analysis" % shape)
        check(w.get("capture_mode") == "cupti", "%s: capture %s" % (shape, w.get("capture_mode")))
        if shape == "data_starved":
            causes = sorted(theirs["causes"], key=lambda c: -c["idle_ns"])
            check(causes[0]["cause"] == "host_work",
                  "data_starved: top cause %s, expected host_work" % causes[0]["cause"])
            check(w.get("top_cause") == "host_work", "data_starved: summary says %s"
                  % w.get("top_cause"))
            check(theirs["steady_utilization"] < 0.6, "data_starved: utilisation %.2f"
                  % theirs["steady_utilization"])
            check("host_work" in md, "summary.md does not show data_starved's verdict")
        if shape == "under_filled":
            # The agent's launch configurations and the driver's SM limits reached the report
            # (simgpu's H100: 132 SMs; the register-bound kernel held by registers).
            check(w.get("status") == "ok", "under_filled: %s %s" % (w.get("status"), w.get("kernel_configs")))
            check(all(c.get("sms") == 132 for c in w.get("kernel_configs", [])) and w.get("kernel_configs"),
                  "under_filled: kernel_configs without the device's 132 SMs: %s" % w.get("kernel_configs"))
        st = summary["workloads"].get(shape + ".static", {})
        check(st.get("status", "").startswith("built"), "%s: static build: %s"
              % (shape, st.get("status")))
    check_kineto_busy(os.path.join(os.path.dirname(os.path.abspath(args.gpu_check)),
                                   "gpu-check.d"), args.work_dir)
    print("gpucheck.simgpu_quick: %s" % ("PASS" if not FAILURES else
                                         "%d failure(s)" % len(FAILURES)))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
