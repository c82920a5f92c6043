#!/usr/bin/env python3
"""asan_agent_runs.py — the ASan+UBSan build of libgsagent.so inside real processes on simgpu.

    asan_agent_runs.py --build build-asan [--source .] [--pythons PY...]

`tools/sanitize address` runs this after the ctest suite. The suite cannot run its end-to-end
drivers under ASan (an instrumented library LD_PRELOADed into an uninstrumented python3 needs the
ASan runtime loaded first), so this script does what they would: it preloads the runtime
(`gcc -print-file-name=libasan.so`) ahead of the agent and runs
  - the C e2e program (itself instrumented) in every lifecycle mode: basic, 8 threads, fork after
    CUDA, exec, the per-thread default stream entry points (leak checking on);
  - the Python workloads on each interpreter given (Debian's and pyenv's 3.9-3.13 by default):
    data_starved with the sampler at 1 kHz and Python stacks, the sampler's phase program (sleeps,
    queue gets, pipe and socket reads, condition variables), NVTX ranges through the NVTX
    injection, and DataLoader-style worker processes (spawn) (leak checking off: CPython does not
    free everything at exit by design).
Each run must exit as it does without the agent, print no sanitizer report, and leave a trace
that the instrumented gsanalyze reads. Exit 0 = every run clean, 1 = a failure (printed).
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

REPORT_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                  "AddressSanitizer:DEADLYSIGNAL", "SUMMARY: UndefinedBehaviorSanitizer")


def asan_runtime():
    path = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()
    return os.path.realpath(path) if path and os.path.exists(path) else None


def default_pythons():
    found = ["/usr/bin/python3"] if os.path.exists("/usr/bin/python3") else []
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    for minor in range(9, 14):
        dirs = sorted(d for d in glob.glob(os.path.join(root, "versions", "3.%d.*" % minor))
                      if not d.endswith("t") and os.path.exists(os.path.join(d, "bin", "python3")))
        if dirs:
            found.append(os.path.join(dirs[-1], "bin", "python3"))
    return found


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", required=True, help="the GS_SANITIZE=address build folder")
    p.add_argument("--source", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    p.add_argument("--pythons", nargs="*", default=None)
    a = p.parse_args()
    build, src = os.path.abspath(a.build), os.path.abspath(a.source)
    agent = os.path.join(build, "lib", "libgsagent.so")
    simgpu = os.path.join(build, "simgpu", "lib")
    gsanalyze = os.path.join(build, "analyzer", "gsanalyze")
    app = os.path.join(build, "tests", "e2e", "gs_e2e_app")
    runtime = asan_runtime()
    for need in (agent, simgpu, gsanalyze, app):
        if not os.path.exists(need):
            print("asan_agent_runs: %s is missing (build %s with GS_SANITIZE=address first)" % (need, build))
            return 1
    if runtime is None:
        print("asan_agent_runs: gcc does not know libasan.so")
        return 1
    py_dir = os.path.join(src, "tests", "workloads", "py")
    pythons = a.pythons if a.pythons is not None else default_pythons()
    work = tempfile.mkdtemp(prefix="gs_asan_runs.")
    failures = []

    def run(name, cmd, expect_rc, preload_runtime, leaks, extra=None, traces_expected=1):
        out = os.path.join(work, name.replace(" ", "_").replace("/", "_"))
        os.makedirs(out)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("GS_", "SIMGPU_")) and k not in ("LD_PRELOAD", "CUDA_INJECTION64_PATH")}
        env.update({
            "LD_LIBRARY_PATH": simgpu,
            "LD_PRELOAD": " ".join(([runtime] if preload_runtime else []) + [agent]),
            "GS_OUTPUT": out + "/",
            "SIMGPU_TRUTH": os.path.join(out, "truth.jsonl"),
            "PYTHONPATH": py_dir,
            "ASAN_OPTIONS": "halt_on_error=1:detect_leaks=%d:abort_on_error=0" % (1 if leaks else 0),
            "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
        })
        env.update(extra or {})
        try:
            r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, cwd=out)
        except subprocess.TimeoutExpired:
            failures.append("%s: timed out" % name)
            print("FAIL %s: timed out" % name, flush=True)
            return
        problems = []
        if r.returncode != expect_rc:
            problems.append("exit %d, expected %d" % (r.returncode, expect_rc))
        if any(m in r.stderr for m in REPORT_MARKERS):
            problems.append("sanitizer report:\n" + r.stderr[-4000:])
        traces = sorted(glob.glob(os.path.join(out, "*.gstrace")))
        if len(traces) < traces_expected:
            problems.append("%d trace(s), expected at least %d" % (len(traces), traces_expected))
        for t in traces:
            rep = subprocess.run([gsanalyze, "report", "--json", t], capture_output=True, text=True,
                                 env=dict(env, LD_PRELOAD="", ASAN_OPTIONS="halt_on_error=1:detect_leaks=1"))
            if rep.returncode != 0 or any(m in rep.stderr for m in REPORT_MARKERS):
                problems.append("gsanalyze on %s: exit %d %s" % (t, rep.returncode, rep.stderr[-2000:]))
        if problems:
            failures.append("%s: %s" % (name, "; ".join(problems)))
            print("FAIL %s: %s" % (name, "; ".join(problems)), flush=True)
            if r.stderr.strip():
                print("  stderr tail: " + r.stderr[-1500:], flush=True)
        else:
            print("ok   %s (%d trace(s))" % (name, len(traces)), flush=True)

    # The C program is instrumented itself, but LD_PRELOAD comes before its own libasan: the
    # runtime is preloaded here too.
    for mode, traces in (("basic", 1), ("threads", 1), ("fork-after", 1), ("exec", 2), ("ptsz", 1)):
        run("e2e_app %s" % mode, [app, mode], 3, True, True, traces_expected=traces)
    for py in pythons:
        tag = os.path.basename(os.path.dirname(os.path.dirname(py))) if "/versions/" in py else "system"
        run("%s data_starved 1kHz" % tag, [py, os.path.join(py_dir, "data_starved.py"), "--steps", "20"],
            0, True, False, {"GS_SAMPLE_HZ": "1000"})
        run("%s sampler_phases" % tag, [py, os.path.join(src, "tests", "sampler", "sampler_phases.py"), py_dir],
            0, True, False, {"GS_SAMPLE_HZ": "1000", "GS_SAMPLE_ALL_THREADS": "1"})
    if pythons:
        py = pythons[0]
        run("nvtx_ranges", [py, os.path.join(py_dir, "nvtx_ranges.py"), "--steps", "10"], 0, True, False,
            {"NVTX_INJECTION64_PATH": agent})
        run("data_starved_workers spawn",
            [py, os.path.join(py_dir, "data_starved_workers.py"), "--start-method", "spawn", "--steps", "20"],
            0, True, False, {"GS_PROCESS_STATS_MS": "100"})
    if failures:
        print("%d of the ASan runs failed (work folder kept: %s)" % (len(failures), work))
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("every ASan run was clean")
    return 0


if __name__ == "__main__":
    sys.exit(main())
