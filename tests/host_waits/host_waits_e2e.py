#!/usr/bin/env python3
"""host_waits_e2e.py -- exact host wait intervals (GS_HOST_WAITS, issue 14) in real programs on simgpu.

Runs one case under LD_PRELOAD=libgsagent.so and reads the trace with `gsanalyze dump` (one
`wait t=.. dur=.. tid=.. STATE function=".." stack=#N [..]` line per recorded wait). Cases:
  phases       tests/sampler's phase program (sleeps, readback + sleep_for, pipe/socket reads
               plain, after poll and after epoll, condition variable, semaphore), with the sampler
               signalling at 1 kHz: it exits 0 with the same RESULT lines as without the agent (it
               exits 3 on any EINTR it did not expect), and each phase's waits carry the phase's
               state, libc function and blocking function; raw system calls are not seen; the
               copy's futex waits inside cudaMemcpy are not recorded; the helper threads (no CUDA
               call) record nothing.
  sync_heavy   workload_sync_heavy --log-ms 0 --sleep-ms 6 with GS_SAMPLE_HZ=0 (no samples at
               all): one ~6 ms IDLE nanosleep per step in log_metrics <- main, covering the sleeps'
               time; nothing inside read_loss's blocking cudaMemcpy.
  threshold    the same with GS_WAIT_MIN_US=50000 (no call blocks that long) and with
               GS_HOST_WAITS=0: no wait at all.
  injection    the same loaded by CUDA_INJECTION64_PATH alone: libc cannot be interposed, no wait
               is recorded and the trace header lists the blind spot (under LD_PRELOAD it does not).
  queue        workload_data_starved_queue: LOCK_WAIT in get_batch_from_workers.
  pipe         workload_data_starved_pipe: IO_WAIT in read_batch_from_pipe.
  python       data_starved_sleep.py: IDLE time.sleep with the Python function wait_for_batch in
               the stack; sync_heavy.py (ctypes: calls only CUPTI sees): no wait inside its CUDA
               calls.
  all_threads  workload_data_starved_queue with GS_SAMPLE_ALL_THREADS=1: the loader threads' sleeps
               are recorded too, and none of the agent's own threads' waits (writer, sampler).
Exit 0 pass, 1 fail, 77 skip (the --python interpreter is missing).
"""

import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testlib"))
from gstest import check, child_env, exit_status, preload  # noqa: E402

MS = 1000000
WAIT_RE = re.compile(r'^wait t=(\d+) dur=(\d+) tid=(\d+) (\w+) function="([^"]*)" stack=(.*)$')
API_RE = re.compile(r"^api t=(\d+) tid=(\d+) (\S+) class=\S+ dur=(\d+)")


def run(args, label, cmd, extra_env, agent=True, injection=False):
    """Runs `cmd` (under the agent unless agent=False: LD_PRELOAD, or CUDA_INJECTION64_PATH alone if
    injection); returns (stdout, trace dump lines)."""
    work = os.path.join(args.work_dir, label)
    subprocess.run(["rm", "-rf", work], check=True)
    os.makedirs(work)
    env = dict(os.environ)
    for k in list(env):
        if k.startswith(("GS_", "SIMGPU_")) or k in ("LD_PRELOAD", "CUDA_INJECTION64_PATH"):
            del env[k]
    env["LD_LIBRARY_PATH"] = args.simgpu_lib
    if agent:
        if injection:
            env["CUDA_INJECTION64_PATH"] = args.agent
            env["LD_PRELOAD"] = preload()
        else:
            env["LD_PRELOAD"] = preload(args.agent)
        env["GS_OUTPUT"] = work + "/"
    env.update(extra_env)
    p = subprocess.run(cmd, env=child_env(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=180)
    if p.returncode != 0:
        print("--- %s stdout ---\n%s--- %s stderr ---\n%s" % (label, p.stdout, label, p.stderr))
    check(p.returncode == 0, "%s exited with %d" % (label, p.returncode))
    if not agent:
        return p.stdout, []
    traces = [f for f in os.listdir(work) if f.endswith(".gstrace")]
    if not check(len(traces) == 1, "%s: expected one trace, found %s" % (label, traces)):
        return p.stdout, []
    d = subprocess.run([args.gsanalyze, "dump", os.path.join(work, traces[0])], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=120)
    check(d.returncode == 0, "%s: gsanalyze dump exited %d: %s" % (label, d.returncode, d.stderr))
    with open(os.path.join(work, "dump.txt"), "w") as f:
        f.write(d.stdout)
    return p.stdout, d.stdout.splitlines()


def waits(lines):
    out = []
    for line in lines:
        m = WAIT_RE.match(line)
        if m:
            out.append({"t": int(m.group(1)), "dur": int(m.group(2)), "tid": int(m.group(3)),
                        "state": m.group(4), "function": m.group(5), "stack": m.group(6)})
    return out


def api_calls(lines):
    out = []
    for line in lines:
        m = API_RE.match(line)
        if m:
            out.append((int(m.group(2)), int(m.group(1)), int(m.group(1)) + int(m.group(4)), m.group(3)))
    return out


def no_wait_inside_a_cuda_call(label, ws, calls):
    """A wait inside a CUDA call (the runtime's own futex/condition waits) belongs to the call."""
    inside = [(w, c) for w in ws for c in calls
              if c[0] == w["tid"] and w["t"] >= c[1] and w["t"] + w["dur"] <= c[2]]
    check(not inside, "%s: %d waits lie inside CUDA calls, e.g. %s" % (label, len(inside), inside[:1]))


def stack_has(w, *functions):
    return all(re.search(r"(^|[\[ :])" + re.escape(f) + r"\b", w["stack"]) for f in functions)


def case_phases(args):
    plain, _ = run(args, "phases_plain", [args.phases], {}, agent=False)
    out, lines = run(args, "phases", [args.phases], {"GS_SAMPLE_HZ": "1000"})
    results = lambda text: [l for l in text.splitlines() if l.startswith("RESULT")]  # noqa: E731
    check(results(out) and results(out) == results(plain),
          "RESULT lines differ with the agent:\n%s\nwithout:\n%s" % (results(out), results(plain)))
    tid = int(re.search(r"^TID (\d+)", out, re.M).group(1))
    phases = {m.group(1): (int(m.group(2)), int(m.group(3)))
              for m in re.finditer(r"^PHASE (\S+) (\d+) (\d+)", out, re.M)}
    ws = waits(lines)
    check(all(w["tid"] == tid for w in ws),
          "waits of threads that make no CUDA call were recorded: %s" % sorted({w["tid"] for w in ws} - {tid}))
    check(all(w["dur"] >= 1 * MS for w in ws), "a wait shorter than GS_WAIT_MIN_US (1 ms) was recorded")
    no_wait_inside_a_cuda_call("phases", ws, api_calls(lines))
    # phase -> (state, accepted libc functions, blocking function, least count)
    expected = {
        # Even sleeps are the raw nanosleep system call (invisible), odd ones clock_nanosleep.
        "sleep": ("IDLE", {"clock_nanosleep"}, "SleepOnce", 18),
        "readback_sleep": ("IDLE", {"nanosleep", "clock_nanosleep"}, "Bookkeeping", 55),
        "pipe_read": ("IO_WAIT", {"read", "__read_chk"}, "ReadAll", 12),
        "pipe_poll": ("IO_WAIT", {"poll", "__poll_chk"}, "ReadAll", 12),
        "socket_recv": ("IO_WAIT", {"recv", "__recv_chk"}, "ReadAll", 12),
        "socket_epoll": ("IO_WAIT", {"epoll_wait"}, "ReadAll", 12),
        "condvar": ("LOCK_WAIT", {"pthread_cond_wait", "pthread_cond_clockwait"}, "WaitForWork", 12),
        "semaphore": ("LOCK_WAIT", {"sem_timedwait"}, "TakeWithTimeout", 12),
        "busy": (None, set(), None, 0),
    }
    for name, (state, functions, blocker, least) in expected.items():
        if not check(name in phases, "phase %s missing from the output" % name):
            continue
        start, end = phases[name]
        inside = [w for w in ws if start <= w["t"] < end]
        if state is None:
            check(not inside, "%s: %d waits recorded in a busy loop" % (name, len(inside)))
            continue
        right = [w for w in inside if w["state"] == state and w["function"] in functions
                 and stack_has(w, blocker, "main")]
        check(len(right) >= least and len(right) == len(inside),
              "%s: %d of %d waits are %s in %s with %s <- main (want >= %d, all): %s" % (
                  name, len(right), len(inside), state, sorted(functions), blocker, least,
                  [(w["state"], w["function"], w["stack"][:160]) for w in inside if w not in right][:2]))


def case_sync_heavy(args):
    steps = 30
    out, lines = run(args, "sync_heavy", [os.path.join(args.workloads_dir, "workload_sync_heavy"), "--log-ms", "0",
                                          "--sleep-ms", "6", "--steps", str(steps)], {"GS_SAMPLE_HZ": "0"})
    ws = waits(lines)
    check(not any(l.startswith("sample ") for l in lines), "samples in a GS_SAMPLE_HZ=0 trace")
    sleeps = [w for w in ws if w["state"] == "IDLE" and w["function"] == "nanosleep"
              and stack_has(w, "log_metrics", "main")]
    check(len(sleeps) == steps and len(ws) == steps,
          "want %d IDLE nanosleep waits in log_metrics <- main and nothing else, got %d of %d: %s" % (
              steps, len(sleeps), len(ws), [(w["state"], w["function"], w["stack"][:160]) for w in ws][:3]))
    check(all(6 * MS <= w["dur"] < 100 * MS for w in sleeps),
          "a 6 ms sleep recorded as %s ns" % [w["dur"] for w in sleeps if not 6 * MS <= w["dur"] < 100 * MS][:3])
    no_wait_inside_a_cuda_call("sync_heavy", ws, api_calls(lines))
    check(not any(BLIND_SPOT in l for l in lines), "LD_PRELOAD: the header says host waits are a blind spot")
    # The capture info says waits were traced and from which length; the final counters count them.
    check(any(l.startswith("header.capture ") and " host_waits=1 host_wait_min_ns=1000000" in l for l in lines),
          "the header's capture info does not say host_waits=1 host_wait_min_ns=1000000: %s" % (
              [l for l in lines if l.startswith("header.capture ")][:1]))
    end = [l for l in lines if l.startswith("end.stats ")]
    check(end and (" host_waits=%d " % len(ws)) in end[0],
          "end.stats does not count the %d recorded waits: %s" % (len(ws), end[:1]))


BLIND_SPOT = 'header.capture.blind_spot "host waits:'


def case_injection(args):
    cmd = [os.path.join(args.workloads_dir, "workload_sync_heavy"), "--log-ms", "0", "--sleep-ms", "6", "--steps", "10"]
    _, lines = run(args, "injection", cmd, {"GS_SAMPLE_HZ": "0"}, injection=True)
    check(any(l.startswith("api ") for l in lines), "CUDA_INJECTION64_PATH: no API call recorded (agent not loaded?)")
    check(not waits(lines), "CUDA_INJECTION64_PATH alone: %d waits recorded" % len(waits(lines)))
    check(any(BLIND_SPOT in l for l in lines), "CUDA_INJECTION64_PATH alone: the header does not list the blind spot")


def case_threshold(args):
    cmd = [os.path.join(args.workloads_dir, "workload_sync_heavy"), "--log-ms", "0", "--sleep-ms", "6", "--steps", "20"]
    _, lines = run(args, "threshold", cmd, {"GS_SAMPLE_HZ": "0", "GS_WAIT_MIN_US": "50000"})
    check('header.setting WAIT_MIN_US="50000"' in lines, "the header does not carry GS_WAIT_MIN_US")
    check(not waits(lines), "GS_WAIT_MIN_US=50000: %d waits of 6 ms recorded" % len(waits(lines)))
    _, lines = run(args, "off", cmd, {"GS_SAMPLE_HZ": "0", "GS_HOST_WAITS": "0"})
    check('header.setting HOST_WAITS="0"' in lines, "the header does not carry GS_HOST_WAITS")
    check(not waits(lines), "GS_HOST_WAITS=0: %d waits recorded" % len(waits(lines)))
    check(any(l.startswith("header.capture ") and " host_waits=0 " in l for l in lines),
          "GS_HOST_WAITS=0: the header's capture info does not say host_waits=0")


def expect_waits(label, ws, state, functions, blockers, least):
    right = [w for w in ws if w["state"] == state and w["function"] in functions and stack_has(w, *blockers)]
    check(len(right) >= least and len(right) == len(ws),
          "%s: %d of %d waits are %s %s in %s (want >= %d, all): %s" % (
              label, len(right), len(ws), state, sorted(functions), " <- ".join(blockers), least,
              [(w["state"], w["function"], w["stack"][:200]) for w in ws if w not in right][:2]))


def case_queue(args):
    _, lines = run(args, "queue", [os.path.join(args.workloads_dir, "workload_data_starved_queue"), "--steps", "10"],
                   {"GS_SAMPLE_HZ": "0"})
    expect_waits("queue", waits(lines), "LOCK_WAIT", {"pthread_cond_wait", "pthread_cond_clockwait"},
                 ("get_batch_from_workers", "main"), 8)


def case_pipe(args):
    _, lines = run(args, "pipe", [os.path.join(args.workloads_dir, "workload_data_starved_pipe"), "--steps", "10"],
                   {"GS_SAMPLE_HZ": "0"})
    expect_waits("pipe", waits(lines), "IO_WAIT", {"read", "__read_chk"}, ("read_batch_from_pipe", "main"), 8)


def case_python(args):
    _, lines = run(args, "python_sleep", [args.python, os.path.join(args.py_dir, "data_starved_sleep.py"),
                                          "--steps", "10"], {"GS_SAMPLE_HZ": "0"})
    # time.sleep: clock_nanosleep (3.11+), select() on no file before.
    expect_waits("python_sleep", waits(lines), "IDLE", {"clock_nanosleep", "select"}, ("wait_for_batch",), 8)
    _, lines = run(args, "python_sync", [args.python, os.path.join(args.py_dir, "sync_heavy.py"), "--steps", "10",
                                         "--log-ms", "1"], {"GS_SAMPLE_HZ": "0"})
    calls = api_calls(lines)
    check(any(c[3] == "cudaMemcpy" for c in calls), "python_sync: no cudaMemcpy recorded")
    no_wait_inside_a_cuda_call("python_sync", waits(lines), calls)
    check(not waits(lines), "python_sync: waits recorded in a loop that only waits inside CUDA calls: %s" %
          [(w["function"], w["stack"][:160]) for w in waits(lines)][:2])


def case_all_threads(args):
    _, lines = run(args, "all_threads", [os.path.join(args.workloads_dir, "workload_data_starved_queue"),
                                         "--steps", "10"], {"GS_SAMPLE_HZ": "100", "GS_SAMPLE_ALL_THREADS": "1"})
    ws = waits(lines)
    main_tids = {c[0] for c in api_calls(lines) if c[3] == "cudaLaunchKernel"}
    loaders = [w for w in ws if w["tid"] not in main_tids and w["function"] == "nanosleep"]
    check(len(loaders) >= 5, "GS_SAMPLE_ALL_THREADS=1: the loader threads' sleeps are missing (%d)" % len(loaders))
    # The agent's own threads (writer: a 10 ms wait per drain; sampler: one per tick) are never
    # traced: a recorded wait never has the agent's code in its stack.
    ours = [w for w in ws if "gs::" in w["stack"]]
    check(not ours, "%d waits of the agent's own threads recorded, e.g. %s" % (
        len(ours), [(w["function"], w["stack"][:200]) for w in ours][:2]))


CASES = {"phases": case_phases, "sync_heavy": case_sync_heavy, "threshold": case_threshold,
         "injection": case_injection, "queue": case_queue,
         "pipe": case_pipe, "python": case_python, "all_threads": case_all_threads}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--agent", required=True)
    ap.add_argument("--gsanalyze", required=True)
    ap.add_argument("--simgpu-lib", required=True)
    ap.add_argument("--workloads-dir", required=True)
    ap.add_argument("--py-dir", required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("--phases", required=True, help="tests/sampler's gs_sampler_phases")
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--tag", default="", help="appended to the case's work folder")
    args = ap.parse_args()
    args.work_dir = os.path.join(args.work_dir, args.case + args.tag)
    if args.case == "python" and not os.path.exists(args.python):
        print("SKIP: no interpreter at %s" % args.python)
        return 77
    CASES[args.case](args)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
