#!/usr/bin/env python3
"""diff_e2e.py — `gsanalyze diff` on two real runs of one workload: with its planted problem
(BEFORE) and with the problem fixed (AFTER), both under libgsagent.so on simgpu.

    diff_e2e.py {cpp|py} SHAPE --agent LIB --gsanalyze BIN --simgpu-lib DIR
                --workloads-dir DIR --py-dir DIR --python PY --work-dir DIR

SHAPE is a workload with a knob that removes its problem (FIXES below). What a user reading the
diff after the fix must see, checked against simgpu's ground truth and gsanalyze's own reports:
  - steady utilisation went up, by what the truth says (each side within 2 points of its truth);
  - the planted cause's idle shrank, by the difference of the two reports' own totals;
  - the stack whose idle shrank most names the planted function and carries the planted cause;
    over all stacks (gsanalyze export --collapsed), the idle charged to it shrank by >= 80%.
  - diff of a run against itself: no cause moved, no stack grew or shrank.
The text rendering names the planted function too. Exit 0 = pass, 1 = a check failed.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import scenarios  # noqa: E402  (tests/scenarios: running workloads, truth, checks)

# shape: (planted cause, planted function, workload args with the problem fixed)
FIXES = {
    # load_batch() does 20 ms of CPU work per step; 0 ms leaves the 5 ms device step waiting on
    # only the copy and the launch path.
    "data_starved": ("host_work", "load_batch", ["--load-ms", "0"]),
}


def report(args, trace):
    p = subprocess.run([args.gsanalyze, "report", "--json", trace], capture_output=True, text=True,
                       timeout=120)
    if p.returncode != 0:
        raise SystemExit("gsanalyze report %s: %s" % (trace, p.stderr))
    return json.loads(p.stdout)


def diff(args, before, after, fmt_json=True):
    cmd = [args.gsanalyze, "diff", before, after] + (["--json"] if fmt_json else [])
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise SystemExit("gsanalyze diff: exit %d: %s" % (p.returncode, p.stderr))
    return json.loads(p.stdout) if fmt_json else p.stdout


def cause_idle(rep, cause):
    return sum(c["idle_ns"] for c in rep["causes"] if c["cause"] == cause)


def steady_util(rep):
    return rep["steady_utilization"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("lang", choices=["cpp", "py"])
    p.add_argument("shape", choices=sorted(FIXES))
    for flag in ("--agent", "--gsanalyze", "--simgpu-lib", "--workloads-dir", "--py-dir",
                 "--python", "--work-dir"):
        p.add_argument(flag, required=True)
    args = p.parse_args()
    cause, planted, fixed_args = FIXES[args.shape]
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)
            print("FAIL: " + what, flush=True)
        return ok

    runs = {}
    for side, extra in (("before", []), ("after", fixed_args)):
        at = scenarios.Attempt("diff %s" % side)
        work = os.path.join(args.work_dir, "diff.%s.%s" % (args.shape, side))
        got = scenarios.run_workload(args, args.shape, {"args": extra}, work, at)
        if got is None:
            print("FAIL: the %s run did not produce a trace: %s" % (side, at.failures))
            return 1
        trace, truth, _ = got
        rep = report(args, trace)
        pid = rep["traces"][0]["pid"]
        busy, wall = next(iter(scenarios.truth_steady_utilization(
            scenarios.read_truth(truth, pid)).values()))
        stacks = scenarios.collapsed_stacks(args, trace, os.path.dirname(trace)) or []
        planted_ns = sum(ns for frames, ns in stacks if scenarios.planted_frame(frames, [planted]))
        runs[side] = dict(trace=trace, rep=rep, truth_util=busy / wall, planted_ns=planted_ns)
        print("%s: steady utilisation %.3f (truth %.3f), %s idle %.1f ms" % (
            side, steady_util(rep), busy / wall, cause, cause_idle(rep, cause) / 1e6), flush=True)

    before, after = runs["before"], runs["after"]
    d = diff(args, before["trace"], after["trace"])
    # Utilisation: the diff's numbers are the reports', and each side is true to within 2 points.
    for side in ("before", "after"):
        util = d["steady_utilization"][side]
        check(abs(util - steady_util(runs[side]["rep"])) < 1e-9,
              "diff's %s steady utilisation %.4f is not the report's %.4f" % (
                  side, util, steady_util(runs[side]["rep"])))
        check(abs(util - runs[side]["truth_util"]) <= 0.02,
              "%s steady utilisation %.3f, truth %.3f" % (side, util, runs[side]["truth_util"]))
    check(d["steady_utilization"]["after"] > d["steady_utilization"]["before"] + 0.2,
          "utilisation did not go up by 20 points after the fix: %s" % d["steady_utilization"])
    # The planted cause shrank by exactly what the two reports say.
    row = next((c for c in d["causes"] if c["cause"] == cause), None)
    if check(row is not None, "no %s row in the diff's causes" % cause):
        check(row["before_ns"] == cause_idle(before["rep"], cause) and
              row["after_ns"] == cause_idle(after["rep"], cause),
              "diff's %s idle %d -> %d is not the reports' %d -> %d" % (
                  cause, row["before_ns"], row["after_ns"], cause_idle(before["rep"], cause),
                  cause_idle(after["rep"], cause)))
        check(row["delta_ns"] < 0 and -row["delta_ns"] >= 0.8 * row["before_ns"],
              "%s idle shrank by %d of %d ns: expected most of it" % (
                  cause, -row["delta_ns"], row["before_ns"]))
    # The stack that shrank most is the planted one, with its cause; none naming it grew.
    shrank = d["stacks_shrank"]
    if check(bool(shrank), "no stack shrank"):
        top = shrank[0]
        check(any(scenarios.names_planted(f, [planted]) for f in top["frames"]),
              "the stack that shrank most does not name %s: %s" % (planted, top["frames"]))
        check(top["cause"] == cause, "the top shrinking stack's cause is %s, not %s" % (top["cause"], cause))
    # Over every stack (the diff lists the top ones only; a stack naming the planted function can
    # be new after the fix, e.g. its copy call, once its work no longer hides it): the idle
    # charged to the planted function shrank by >= 80% (gsanalyze export --collapsed, each side).
    check(runs["after"]["planted_ns"] <= 0.2 * runs["before"]["planted_ns"] and runs["before"]["planted_ns"] > 0,
          "idle on stacks naming %s: %.1f ms before, %.1f ms after the fix: expected a shrink of >= 80%%" % (
              planted, runs["before"]["planted_ns"] / 1e6, runs["after"]["planted_ns"] / 1e6))
    text = diff(args, before["trace"], after["trace"], fmt_json=False)
    check(planted in text, "the text diff does not name %s:\n%s" % (planted, text))
    # A run against itself: nothing moved.
    same = diff(args, before["trace"], before["trace"])
    check(all(c["delta_ns"] == 0 for c in same["causes"]), "self-diff moved causes: %s" % same["causes"])
    check(not same["stacks_grew"] and not same["stacks_shrank"],
          "self-diff lists stacks: grew %s shrank %s" % (same["stacks_grew"], same["stacks_shrank"]))
    print("diff %s.%s: %s" % (args.lang, args.shape, "FAIL" if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
