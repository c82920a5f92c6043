#!/usr/bin/env python3
"""collective_test.py MODE RANK_PROGRAM -- simgpuCollective across processes (README "Collectives").

Modes (one ctest each):
  rendezvous  4 ranks, rank 2 late by --slow-ms each step: every rank's k-th collective ends at the
              same time, the late rank waits 0, the others wait ~slow-ms, in the truth log and on
              the host; the collective occupies its stream (the next step starts after it), while a
              kernel on another stream runs during the wait.
  single      no SIMGPU_WORLD: a collective waits for nobody and takes exactly its duration.
  dead_rank   a world of 2 where rank 1 never comes: the collective fails after
              SIMGPU_COLLECTIVE_TIMEOUT with a sticky cudaErrorLaunchTimeout, instead of hanging.
Exit 0 = pass. Standard library only.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

COLLECTIVE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
MS = 1000000


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def run_ranks(program, ranks, world, job, workdir, args, extra_env=None, timeout=60):
    procs = []
    for rank in ranks:
        env = dict(os.environ)
        env.update({"RANK": str(rank), "SIMGPU_JOB": job, "CUDA_INJECTION64_PATH": "none",
                    "SIMGPU_TRUTH": os.path.join(workdir, "truth-%d.jsonl" % rank)})
        if world is not None:
            env["SIMGPU_WORLD"] = str(world)
        env.update(extra_env or {})
        procs.append(subprocess.Popen([program] + args, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    results = []
    for p in procs:
        out, err = p.communicate(timeout=timeout)
        results.append((p.returncode, out, err))
    return results


def truth(workdir, rank):
    with open(os.path.join(workdir, "truth-%d.jsonl" % rank)) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    ops = [o for o in lines if o["kind"] in ("kernel", "collective")]
    return sorted(ops, key=lambda o: o["start_ns"])


def host_lines(out):
    steps = []
    for line in out.splitlines():
        fields = dict(kv.split("=", 1) for kv in line.split())
        steps.append(fields)
    return steps


def rendezvous(program, workdir):
    steps, slow_rank, slow_ms, coll_us = 3, 2, 40, 1000
    job = "ctest-rdv-%d" % os.getpid()
    results = run_ranks(program, range(4), 4, job, workdir,
                        ["--steps", str(steps), "--slow-rank", str(slow_rank), "--slow-ms",
                         str(slow_ms), "--collective-us", str(coll_us), "--side-kernel", "1"])
    for rank, (rc, out, err) in enumerate(results):
        check(rc == 0, "rank %d exited %d: %s %s" % (rank, rc, out, err))
    per_rank = [truth(workdir, r) for r in range(4)]
    colls = [[o for o in ops if o["kind"] == "collective"] for ops in per_rank]
    for rank, c in enumerate(colls):
        check(len(c) == steps, "rank %d: %d collectives in the truth log, want %d" %
              (rank, len(c), steps))
        for o in c:
            check(o["name"] == COLLECTIVE, "collective named %r" % o["name"])
            check(o["end_ns"] - o["start_ns"] - o["wait_ns"] == coll_us * 1000,
                  "rank %d: end - start - wait_ns must be the duration: %r" % (rank, o))
    for k in range(steps):
        ends = {colls[r][k]["end_ns"] for r in range(4)}
        check(len(ends) == 1, "step %d: the ranks' collectives end at different times %r" %
              (k, sorted(ends)))
        check(colls[slow_rank][k]["wait_ns"] == 0,
              "step %d: the late rank waited %d ns" % (k, colls[slow_rank][k]["wait_ns"]))
        for r in range(4):
            if r != slow_rank:
                w = colls[r][k]["wait_ns"]
                check(w >= (slow_ms // 2) * MS,
                      "step %d rank %d: waited %.1f ms for the late rank, want ~%d" %
                      (k, r, w / MS, slow_ms))
    for r in range(4):
        kernels = [o for o in per_rank[r] if o["kind"] == "kernel"]
        computes = [o for o in kernels if o["name"] == "compute"]
        sides = [o for o in kernels if o["name"] == "side"]
        for k in range(1, steps):
            check(computes[k]["start_ns"] >= colls[r][k - 1]["end_ns"],
                  "rank %d: step %d's compute started before the collective ended" % (r, k))
        if r != slow_rank:
            for k in range(steps):
                check(sides[k]["start_ns"] < colls[r][k]["end_ns"] - (slow_ms // 4) * MS,
                      "rank %d step %d: the other stream's kernel waited for the collective" %
                      (r, k))
        # Work that depends on the collective starts after it: a stream waiting on an event
        # recorded behind it, and any stream's work behind a cudaMalloc (device barrier).
        for name in ("after_event", "after_malloc"):
            deps = [o for o in kernels if o["name"] == name]
            check(len(deps) == steps, "rank %d: %d %s kernels" % (r, len(deps), name))
            for k, o in enumerate(deps[:steps]):
                check(o["start_ns"] >= colls[r][k]["end_ns"],
                      "rank %d step %d: %s started %.2f ms before the collective ended" %
                      (r, k, name, (colls[r][k]["end_ns"] - o["start_ns"]) / MS))
        host = host_lines(results[r][1])
        check(len(host) == steps, "rank %d printed %r" % (r, results[r][1]))
        if r != slow_rank:
            for k in range(1, steps):
                check(int(host[k]["sync_ns"]) >= (slow_ms // 2) * MS,
                      "rank %d step %d: the host sync returned after %.1f ms" %
                      (r, k, int(host[k]["sync_ns"]) / MS))
    check(not os.path.exists("/dev/shm/simgpu-%s-world" % job),
          "the shared memory segment was left behind")
    print("rendezvous: 4 ranks x %d steps, waits %s ms" % (
        steps, [round(colls[r][1]["wait_ns"] / MS, 1) for r in range(4)]))


def single(program, workdir):
    results = run_ranks(program, [0], None, "ctest-single-%d" % os.getpid(), workdir,
                        ["--steps", "2", "--collective-us", "3000"])
    rc, out, err = results[0]
    check(rc == 0, "exited %d: %s %s" % (rc, out, err))
    colls = [o for o in truth(workdir, 0) if o["kind"] == "collective"]
    check(len(colls) == 2, "collectives: %r" % colls)
    for o in colls:
        check(o["wait_ns"] == 0 and o["end_ns"] - o["start_ns"] == 3 * MS, "collective %r" % o)
    print("single: 2 collectives of exactly 3 ms, no wait")


def dead_rank(program, workdir):
    job = "ctest-dead-%d" % os.getpid()
    t0 = time.monotonic()
    results = run_ranks(program, [0], 2, job, workdir, ["--steps", "2"],
                        {"SIMGPU_COLLECTIVE_TIMEOUT": "300ms"}, timeout=50)
    elapsed = time.monotonic() - t0
    rc, out, err = results[0]
    check(rc == 3, "rank 0 exited %d (want 3: its calls failed): %s %s" % (rc, out, err))
    host = host_lines(out)
    check([h["result"] for h in host] == ["cudaErrorLaunchTimeout"] * 2,
          "results %r (want a sticky cudaErrorLaunchTimeout)" % host)
    check("SIMGPU_COLLECTIVE_TIMEOUT" in err, "no message on stderr: %r" % err)
    check(elapsed < 30, "took %.1f s" % elapsed)
    check(not os.path.exists("/dev/shm/simgpu-%s-world" % job),
          "the shared memory segment was left behind")
    print("dead_rank: failed after %.2f s with a sticky cudaErrorLaunchTimeout" % elapsed)


def main():
    mode, program = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="simgpu-coll-") as workdir:
        {"rendezvous": rendezvous, "single": single, "dead_rank": dead_rank}[mode](program, workdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
