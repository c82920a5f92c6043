#!/usr/bin/env python3
"""multirank_test.py CASE --work-dir DIR [...] -- a data-parallel job of 4 ranks on simgpu, traced
by gsrun, analysed by gsanalyze across ranks: gsanalyze must name the rank with
the planted slow input pipeline and its stack.

The job: 4 processes of workload_collective_ranks (one simulated device each), started the way a
job wrapper starts them (RANK/LOCAL_RANK/WORLD_SIZE set, each through `gsrun`), meeting in an
all-reduce (simgpuCollective) every step. Cases:
  straggler  rank 2 runs load_batch_slowly() (--slow-load-ms per step): `gsanalyze report DIR`
             names rank 2 and a stack with load_batch_slowly; the per-rank collective waits agree
             with simgpu's truth; the text report says so too; with --what-if the ranks
             joined at their collectives replay the steps (3%) and predict them more than twice
             as short with rank 2 at the other ranks' median host time, and the ranks' replays
             joined there predict the job's run more than halved with input preparation free. Leaves the job in WORK/straggler
             for the cases below (ctest fixture).
  balanced   no slow rank: every rank has a row and its steps; no stack of load_batch_slowly
             anywhere. (Whether a straggler is named is not checked: on a shared 2-core machine a
             descheduled rank is a real straggler; the unit test MultiRankTest.Balanced* checks
             the verdict on balanced data.) `diff --what-if` of the straggler case's job against
             this one sets the straggler's predicted step against this job's measured one.
  summaries  `gsanalyze summarize` per trace, then `gsanalyze report` of the summaries: the same
             "ranks" section as the report of the traces (and the folder of summaries works),
             and with --what-if the same straggler prediction.
  tables     `gsanalyze export --tables` of the job, loaded into DuckDB (the test venv's python,
             --venv-python; exit 77 when it is missing): per-cause idle totals equal the report's,
             and the straggler's top stack joins to its frames.
Standard library only (DuckDB runs in the venv's interpreter, in a child process).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testlib"))
import gstest  # noqa: E402
from gstest import check, exit_status, fail  # noqa: E402

WORLD = 4
SLOW_RANK = 2
PLANTED = "load_batch_slowly"
MS = 1000000


def run_job(args, out_dir, slow_rank, steps=12):
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    procs = []
    for rank in range(WORLD):
        env = dict(os.environ)
        env.update({
            "RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": str(WORLD),
            "LOCAL_WORLD_SIZE": str(WORLD), "SIMGPU_WORLD": str(WORLD),
            # One rendezvous per job run: concurrent ctest runs must not meet each other.
            "SIMGPU_JOB": "multirank-%d-%s" % (os.getpid(), os.path.basename(out_dir)),
            "SIMGPU_TRUTH": os.path.join(out_dir, "truth-r%d.jsonl" % rank),
            "LD_LIBRARY_PATH": args.simgpu_lib,
            "SIMGPU_COLLECTIVE_TIMEOUT": "30s",
        })
        cmd = [args.gsrun, "-q", "--agent", args.agent, "-o", out_dir + "/", "--",
               args.workload, "--steps", str(steps), "--slow-rank", str(slow_rank),
               "--load-ms", "1", "--slow-load-ms", "40"]
        procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    ok = True
    for rank, p in enumerate(procs):
        out, err = p.communicate(timeout=120)
        if not check(p.returncode == 0, "rank %d exited %d: %s %s" % (rank, p.returncode, out, err)):
            ok = False
    traces = sorted(f for f in os.listdir(out_dir) if f.endswith(".gstrace"))
    check(len(traces) == WORLD, "want %d traces in %s, got %r" % (WORLD, out_dir, traces))
    return ok and len(traces) == WORLD


def gsanalyze(args, *argv):
    p = subprocess.run([args.gsanalyze] + list(argv), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=300)
    if p.returncode != 0:
        fail("gsanalyze %s exited %d: %s" % (" ".join(argv), p.returncode, p.stderr))
        return None
    return p.stdout


def report_json(args, *inputs):
    out = gsanalyze(args, "report", "--json", *inputs)
    return json.loads(out) if out else None


def truth_waits(out_dir):
    """Per rank: simgpu's own collective wait_ns, summed."""
    waits = {}
    for rank in range(WORLD):
        total = 0
        with open(os.path.join(out_dir, "truth-r%d.jsonl" % rank)) as f:
            for line in f:
                op = json.loads(line)
                if op["kind"] == "collective":
                    total += op["wait_ns"]
        waits[rank] = total
    return waits


def frames_of(stack):
    return " ← ".join(stack["frames"])


def case_straggler(args):
    # The verdict depends on host timing (a fast rank descheduled for longer than the planted
    # delay is late too): like the scenario suite, a failed run is rerun once with a fresh job and
    # judged on that run alone. The bounds never change.
    before = len(gstest.FAILURES)
    straggler_run(args)
    if len(gstest.FAILURES) > before:
        print("rerunning the job once (host timing)")
        del gstest.FAILURES[before:]
        straggler_run(args)


def straggler_run(args):
    out_dir = os.path.join(args.work_dir, "straggler")
    if not run_job(args, out_dir, SLOW_RANK):
        return
    rep = report_json(args, out_dir)
    if rep is None or not check("ranks" in rep, "no ranks section in the report"):
        return
    ranks = rep["ranks"]
    rows = ranks["rows"]
    check([r["rank"] for r in rows] == list(range(WORLD)), "rows %r" % [r["label"] for r in rows])
    s = ranks["straggler"]
    if not check(s is not None, "no straggler named; notes %r" % ranks["notes"]):
        return
    check(s["rank"] == SLOW_RANK, "straggler is %r, want rank %d" % (s["label"], SLOW_RANK))
    check(s["last_at_steps"] * 2 > ranks["steps_compared"],
          "rank %d last at %d of %d steps" % (SLOW_RANK, s["last_at_steps"], ranks["steps_compared"]))
    top = s["stacks"][0] if s["stacks"] else {"frames": []}
    check(any(PLANTED in f for f in top["frames"]),
          "the straggler's top stack does not contain %s: %s" % (PLANTED, frames_of(top)))
    check(s["host_bound_idle_ns"] >= 0.5 * s["idle_ns"] > 0,
          "host-bound %d of idle %d before its collectives" % (s["host_bound_idle_ns"], s["idle_ns"]))
    check(ranks["clocks"]["residual_error_ns"] == 0 and ranks["clocks"]["boots"] == 1,
          "one host, one boot: clocks %r" % ranks["clocks"])
    # The other ranks' waits, as gsanalyze measures them, against simgpu's truth (generous: the
    # analysis measures beyond the shortest collective of each step, the truth beyond the latest
    # start; both include every step).
    truth = truth_waits(out_dir)
    for r in rows:
        want, got = truth[r["rank"]], r["collective_wait_ns"]
        check(abs(got - want) <= max(0.15 * want, 3 * MS),
              "rank %d: collective wait %.1f ms, truth %.1f ms" % (r["rank"], got / MS, want / MS))
    # On a loaded machine a descheduled fast rank is late now and then, so the slow rank waits too.
    check(truth[SLOW_RANK] < 0.5 * min(truth[r] for r in range(WORLD) if r != SLOW_RANK),
          "truth: the slow rank waited %r" % truth)
    text = gsanalyze(args, "report", "--width", "120", out_dir) or ""
    check("Straggler: rank %d" % SLOW_RANK in text and PLANTED in text,
          "text report lacks the straggler line:\n" + text[:3000])
    check(s["prediction"] is None, "a prediction without --what-if: %r" % s["prediction"])
    # --what-if: the ranks joined at their collectives replay the measured steps, and with rank
    # 2's host-bound idle at the median rank's (its planted 40 ms load is most of a ~46 ms step)
    # the step is less than half as long.
    what_if = report_json(args, "--what-if", out_dir)
    p = (((what_if or {}).get("ranks") or {}).get("straggler") or {}).get("prediction")
    if check(p is not None and p["ok"], "no straggler prediction: %r" % p):
        check(abs(p["step_error"]) <= p["tolerance"] == 0.03, "join check %r" % p)
        check(0 < p["predicted_step_ns"] < 0.5 * p["measured_step_ns"],
              "step %.1f -> %.1f ms" % (p["measured_step_ns"] / MS, p["predicted_step_ns"] / MS))
        check(p["steps"] == ranks["steps_compared"] - 1 and
              0 < p["predicted_wall_ns"] < p["measured_wall_ns"], "prediction %r" % p)
        # Each rank's replay, joined at the collectives: rank 2's input preparation made free (the
        # input recommendation's bound) shortens every rank's steps, so the job's run more than
        # halves; replayed one rank at a time with the others' waits as measured, it would not.
        replay = what_if["replay"]
        check(replay["ok"] and replay["joined_steps"] == ranks["steps_compared"] - 1, "replay %r" % replay)
        bound = [r["prediction"]["bound_wall_ns"] for r in what_if["recommendations"]
                 if r["kind"] in ("input_pipeline", "input_workers") and "prediction" in r]
        check(bound and 0 < bound[0] < 0.5 * replay["measured_wall_ns"],
              "input preparation free: %r against the run %r" % (bound, replay["measured_wall_ns"]))
        text = gsanalyze(args, "report", "--what-if", "--width", "120", out_dir) or ""
        check("What-if (ranks joined at their collectives): rank %d" % SLOW_RANK in text,
              "text report lacks the straggler's what-if:\n" + text[:3000])
    print("straggler: %s; top stack %s; what-if %r" % (s["evidence"], frames_of(top), p))


def case_balanced(args):
    out_dir = os.path.join(args.work_dir, "balanced")
    if not run_job(args, out_dir, WORLD + 1, steps=10):
        return
    rep = report_json(args, out_dir)
    if rep is None or not check("ranks" in rep, "no ranks section"):
        return
    ranks = rep["ranks"]
    check(len(ranks["rows"]) == WORLD, "rows %r" % ranks["rows"])
    check(all(r["steps"] == 10 for r in ranks["rows"]), "steps %r" % [r["steps"] for r in ranks["rows"]])
    check(ranks["steps_compared"] == 10, "steps compared %r" % ranks["steps_compared"])
    check(PLANTED not in json.dumps(ranks), "%s in a job that never ran it" % PLANTED)
    check(ranks["step_ns"] > 0 and ranks["run_ns"] > 0, "step %r, run %r" % (ranks["step_ns"], ranks["run_ns"]))
    s = ranks["straggler"]
    print("balanced: %s; notes %r" % (s["evidence"] if s else "no straggler", ranks["notes"]))
    # The straggler job "fixed" into this one: `diff --what-if` sets the straggler's predicted
    # step against this job's measured one (how close is a benchmark's, not a test's, question:
    # tests/bench/run_whatif_pairs).
    straggler = job_traces(args)
    if not straggler:
        return
    out = gsanalyze(args, "diff", "--what-if", "--json", *straggler, "--",
                    *sorted(os.path.join(out_dir, f) for f in os.listdir(out_dir) if f.endswith(".gstrace")))
    predictions = json.loads(out)["what_if"]["predictions"] if out else []
    p = [x for x in predictions if x["kind"] == "straggler"]
    if check(len(p) == 1, "no straggler prediction in the diff: %r" % predictions):
        p = p[0]
        check(p["step_ns_after"] == ranks["step_ns"] and 0 < p["step_ns_predicted"] < p["step_ns_before"],
              "steps %r" % p)
        check(abs(p["step_error"] - (p["step_ns_predicted"] - p["step_ns_after"]) / p["step_ns_after"]) < 1e-5,
              "step error %r" % p)
        print("diff --what-if: step %.2f ms -> predicted %.2f ms, measured %.2f ms" % (
            p["step_ns_before"] / MS, p["step_ns_predicted"] / MS, p["step_ns_after"] / MS))


def job_traces(args):
    out_dir = os.path.join(args.work_dir, "straggler")
    traces = sorted(os.path.join(out_dir, f) for f in os.listdir(out_dir) if f.endswith(".gstrace"))
    if len(traces) != WORLD:
        fail("the straggler case's job is missing (%r): run multirank.straggler first" % traces)
        return None
    return traces


def case_summaries(args):
    traces = job_traces(args)
    if not traces:
        return
    sum_dir = os.path.join(args.work_dir, "summaries")
    shutil.rmtree(sum_dir, ignore_errors=True)
    os.makedirs(sum_dir)
    summaries = []
    for t in traces:
        s = os.path.join(sum_dir, os.path.basename(t) + ".gssummary")
        if gsanalyze(args, "summarize", t, "-o", s) is None:
            return
        summaries.append(s)
        # Small: a fixed part (identity, causes, 20 stacks) and ~30 bytes per collective step,
        # whatever the trace's length.
        check(os.path.getsize(s) < 8192 + 64 * 12,
              "summary %d bytes for a %d-byte trace" % (os.path.getsize(s), os.path.getsize(t)))
    from_traces = report_json(args, *traces)
    from_summaries = report_json(args, *summaries)
    from_folder = report_json(args, sum_dir)
    if not (from_traces and from_summaries and from_folder):
        return
    check(from_summaries["ranks"] == from_traces["ranks"],
          "ranks from summaries differ from ranks from traces:\n%s\n%s" % (
              json.dumps(from_summaries["ranks"])[:2000], json.dumps(from_traces["ranks"])[:2000]))
    check(from_folder["ranks"] == from_summaries["ranks"], "a folder of summaries differs")
    check((from_summaries["ranks"]["straggler"] or {}).get("rank") == SLOW_RANK,
          "straggler from summaries: %r" % from_summaries["ranks"]["straggler"])
    # --what-if: the straggler's prediction joins the ranks' steps, which the summaries carry, so
    # it is the same from summaries as from the traces (the other predictions need the traces).
    what_if_traces = report_json(args, "--what-if", *traces)
    what_if_summaries = report_json(args, "--what-if", *summaries)
    if what_if_traces and what_if_summaries:
        p = what_if_summaries["ranks"]["straggler"]["prediction"]
        check(p is not None and p["ok"] and p == what_if_traces["ranks"]["straggler"]["prediction"],
              "straggler prediction from summaries %r, from traces %r" % (
                  p, what_if_traces["ranks"]["straggler"]["prediction"]))
        check(any("the straggler's prediction only" in n for n in what_if_summaries["notes"]),
              "notes %r" % what_if_summaries["notes"])
    print("summaries: %d files, %d bytes in all; same ranks section as the traces" % (
        len(summaries), sum(os.path.getsize(s) for s in summaries)))


DUCKDB_SCRIPT = r"""
import json, sys
import duckdb
d = sys.argv[1]
con = duckdb.connect()
out = {}
for fmt, reader in (("csv", "read_csv_auto"), ("jsonl", "read_json_auto")):
    cols = [r[0] for r in con.execute(
        "DESCRIBE SELECT * FROM %s('%s/idle_intervals.%s')" % (reader, d, fmt)).fetchall()]
    causes = [c for c in cols if c.startswith("idle_") and c.endswith("_ns")]
    sums = con.execute("SELECT " + ", ".join("sum(%s)" % c for c in causes) +
                       " FROM %s('%s/idle_intervals.%s')" % (reader, d, fmt)).fetchone()
    out[fmt] = {c[len("idle_"):-len("_ns")]: int(v or 0) for c, v in zip(causes, sums)}
# The straggler's most charged stack, joined to its frames.
row = con.execute(
    "WITH s AS (SELECT rank FROM read_csv_auto('%s/ranks.csv') WHERE straggler) "
    "SELECT i.stack_id, sum(i.duration_ns) AS ns FROM read_csv_auto('%s/idle_intervals.csv') i, s "
    "WHERE i.rank = s.rank GROUP BY i.stack_id ORDER BY ns DESC LIMIT 1" % (d, d)).fetchone()
frames = [r[0] for r in con.execute(
    "SELECT frame FROM read_csv_auto('%s/stacks.csv') WHERE stack_id = %d ORDER BY depth" %
    (d, row[0])).fetchall()] if row else []
out["straggler_top_frames"] = frames
out["ranks"] = con.execute("SELECT count(*) FROM read_json_auto('%s/ranks.jsonl')" % d).fetchone()[0]
print(json.dumps(out))
"""


def case_tables(args):
    if not args.venv_python or not os.path.exists(args.venv_python):
        print("SKIP: the test venv's python (%r) is missing: run tools/setup" % args.venv_python)
        sys.exit(77)
    traces = job_traces(args)
    if not traces:
        return
    tables = os.path.join(args.work_dir, "tables")
    shutil.rmtree(tables, ignore_errors=True)
    if gsanalyze(args, "export", "--tables", tables, os.path.dirname(traces[0])) is None:
        return
    for name in ("idle_intervals", "stacks", "ranks"):
        for ext in ("csv", "jsonl"):
            check(os.path.exists(os.path.join(tables, "%s.%s" % (name, ext))), "no %s.%s" % (name, ext))
    p = subprocess.run([args.venv_python, "-c", DUCKDB_SCRIPT, tables], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=300)
    if p.returncode != 0 and "No module named 'duckdb'" in p.stderr:
        print("SKIP: duckdb is not installed in %s" % args.venv_python)
        sys.exit(77)
    if not check(p.returncode == 0, "duckdb script failed: %s" % p.stderr):
        return
    got = json.loads(p.stdout)
    rep = report_json(args, *traces)
    if rep is None:
        return
    want = {c["cause"]: c["idle_ns"] for c in rep["causes"]}
    for fmt in ("csv", "jsonl"):
        check(got[fmt] == want, "%s: per-cause totals from DuckDB %r != report %r" % (fmt, got[fmt], want))
    check(got["ranks"] == WORLD, "ranks table has %r rows" % got["ranks"])
    check(any(PLANTED in f for f in got["straggler_top_frames"]),
          "straggler's top stack in the tables: %r" % got["straggler_top_frames"])
    print("tables: DuckDB totals %r equal the report's" % got["csv"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=["straggler", "balanced", "summaries", "tables"])
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--gsrun")
    ap.add_argument("--agent")
    ap.add_argument("--gsanalyze", required=True)
    ap.add_argument("--workload")
    ap.add_argument("--simgpu-lib")
    ap.add_argument("--venv-python", default="")
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    {"straggler": case_straggler, "balanced": case_balanced, "summaries": case_summaries,
     "tables": case_tables}[args.case](args)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
