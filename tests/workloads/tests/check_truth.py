#!/usr/bin/env python3
"""check_truth.py -- runs one workload on simgpu with SIMGPU_TRUTH and checks that the device's
ground truth shows the expected timeline.

  check_truth.py SHAPE --program PATH [--python PY] [--smoke]
  check_truth.py all-python --program PY_DIR --python PY --smoke
  check_truth.py self-test --program PY_DIR/data_starved.py --python PY

SHAPE is a workload name (data_starved, pageable_copies, ...). PATH is the nvcc-built executable,
or with --python the script run by interpreter PY. The environment must make the program find
simgpu's libcudart.so.13 (ctest sets LD_LIBRARY_PATH); inherited SIMGPU_* settings are dropped so
that the model's defaults apply. --smoke runs a few steps and checks counts and ordering only
(used to run every Python workload on every installed CPython). self-test checks the checker:
it records a short data_starved run, then breaks its truth in several ways (order, count,
duration, memory kind, name, submission order) and fails unless every broken copy is rejected
and the intact one accepted.

What is checked, per workload (see SHAPES):
  - counts, exact: N steps -> N x k kernels, N copies, allocations...;
  - ordering, exact: per step the input copy ends before the step's kernels start, kernels run in
    stream order with the expected names, read-backs come after the kernels they wait for, frees
    after the kernels they follow...;
  - durations: every kernel within KERNEL_TOLERANCE of its modelled duration; copies within
    COPY_TOLERANCE of bytes / bandwidth (simgpu's documented default bandwidths);
  - memory kinds: pinned vs pageable host memory, sync vs async;
  - the gross shape: the device's busy fraction over the loop (union of kernels and copies from
    the first to the last) inside a band around the workload's expected utilisation.
Timing checks (the busy band, idle-gap lengths) depend on the host being scheduled: on a loaded
machine (2 shared cores) a thread can be descheduled for tens of ms. When only timing checks fail,
the workload is run once more; everything else must pass the first time.
Prints one line per run with the measured numbers; exits 1 with the failures listed.
"""

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "testlib"))
from gstest import child_env, union_ns  # noqa: E402  (tests/testlib)

# The model's durations (tests/workloads/cpp/mlp.cuh, py/workload.py) and simgpu's default copy
# bandwidths (tests/simgpu/README.md).
MLP_NS = {"normalize_batch": 200000, "forward_layer": 400000, "loss_reduce": 100000,
          "backward_layer": 600000, "sgd_update": 700000}
TINY_NS = {"bias_add": 2000, "relu_inplace": 1500, "scale_inplace": 2500, "residual_add": 2000}
CHURN_NS = {"forward_layer": 15000, "backward_layer": 20000}
WELL_FED_NS = dict((name, 4 * ns) for name, ns in MLP_NS.items())
PAGEABLE_NS = dict((name, ns // 4) for name, ns in MLP_NS.items())
NVTX_NS = dict((name, 2 * ns) for name, ns in MLP_NS.items())
BW_PINNED_H2D = 24e9
BW_PAGEABLE_H2D = 8e9
BW_PAGEABLE_D2H = 6e9

# A kernel's truth duration must be within 2% + 1 us of the model; a copy's within 10% + 5 us of
# bytes / bandwidth. simgpu schedules durations exactly, so these only absorb rounding.
KERNEL_TOLERANCE = (0.02, 1000)
COPY_TOLERANCE = (0.10, 5000)


class Failures(object):
    def __init__(self):
        self.items = []
        self.timing_only = True

    def expect(self, ok, message, timing=False):
        """Records a failure unless ok; timing=True marks a check that scheduling noise can
        break (see the module comment)."""
        if not ok:
            self.items.append(message + (" [timing]" if timing else ""))
            self.timing_only = self.timing_only and timing
        return ok


def base_name(record):
    """'forward_layer' from 'forward_layer(float const*, ...)', '_Z13forward_layer...' or a
    simgpuKernel name."""
    name = record.get("demangled") or record.get("name") or ""
    depth = 0
    for i, ch in enumerate(name):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            name = name[:i]
            break
    return name.rsplit(" ", 1)[-1]


def duration(r):
    return r["end_ns"] - r["start_ns"]


def within(actual, expected, tolerance):
    rel, absolute = tolerance
    return abs(actual - expected) <= rel * expected + absolute


def mlp_step_names(layers):
    return (["normalize_batch"] + ["forward_layer"] * layers + ["loss_reduce"]
            + ["backward_layer"] * layers + ["sgd_update"])


class Truth(object):
    """simgpu's records, by kind and start time; `ranges` are a workload's own NVTX range log."""

    def __init__(self, records, ranges=()):
        self.records = records
        self.ranges = sorted(ranges, key=lambda r: (r["start_ns"], r["depth"]))
        by_start = sorted(records, key=lambda r: (r["start_ns"], r["end_ns"]))
        self.kernels = [r for r in by_start if r["kind"] == "kernel"]
        self.copies = [r for r in by_start if r["kind"] == "memcpy"]
        self.memsets = [r for r in by_start if r["kind"] == "memset"]
        self.allocs = [r for r in by_start if r["kind"] == "alloc"]
        self.frees = [r for r in by_start if r["kind"] == "free"]

    def h2d(self):
        return [c for c in self.copies if c["copy_kind"] == "HtoD"]

    def d2h(self):
        return [c for c in self.copies if c["copy_kind"] == "DtoH"]

    def busy_fraction(self, lo=None, hi=None):
        """Union of kernel/copy/memset time over [lo, hi] (default: from the first kernel or copy
        start to the last end), as a fraction of it."""
        loop = self.kernels + self.copies
        if not loop:
            return 0.0
        lo = min(r["start_ns"] for r in loop) if lo is None else lo
        hi = max(r["end_ns"] for r in loop) if hi is None else hi
        intervals = sorted((max(r["start_ns"], lo), min(r["end_ns"], hi))
                           for r in loop + self.memsets if r["end_ns"] > lo and r["start_ns"] < hi)
        return union_ns(intervals) / float(hi - lo) if hi > lo else 0.0


def chunks(items, size):
    return [items[i:i + size] for i in range(0, len(items), size)]


# ---- checks shared by several shapes --------------------------------------------------------

def check_kernel_sequence(f, kernels, step_names, steps, model_ns, label="kernels"):
    """Exact count and per-step order of kernel names; every duration near the model."""
    per_step = len(step_names)
    if not f.expect(len(kernels) == steps * per_step,
                    "%s: %d kernels, expected %d steps x %d" % (label, len(kernels), steps,
                                                                 per_step)):
        return []
    names = [base_name(k) for k in kernels]
    for i, step in enumerate(chunks(names, per_step)):
        if not f.expect(step == step_names, "%s: step %d runs %s, expected %s" %
                        (label, i, step, step_names)):
            break
    for k in kernels:
        expected = model_ns.get(base_name(k))
        if expected is not None and not f.expect(
                within(duration(k), expected, KERNEL_TOLERANCE),
                "kernel %s took %d ns, model %d ns" % (base_name(k), duration(k), expected)):
            break
    for a, b in zip(kernels, kernels[1:]):  # stream order: one at a time, in submission order
        if a.get("stream") != b.get("stream"):
            continue
        if not (f.expect(b["start_ns"] >= a["end_ns"],
                         "kernels overlap on stream %s" % a.get("stream"))
                and f.expect(b["correlation_id"] > a["correlation_id"],
                             "stream %s ran kernel %d before kernel %d" %
                             (a.get("stream"), a["correlation_id"], b["correlation_id"]))):
            break
    return chunks(kernels, per_step)


def check_copies(f, copies, count, nbytes, src_kind, dst_kind, is_async, bandwidth, label):
    f.expect(len(copies) == count, "%s: %d copies, expected %d" % (label, len(copies), count))
    for c in copies:
        ok = (f.expect(c["bytes"] == nbytes,
                       "%s: %d bytes, expected %d" % (label, c["bytes"], nbytes))
              and f.expect(c["src_kind"] == src_kind and c["dst_kind"] == dst_kind,
                           "%s: %s -> %s, expected %s -> %s" % (label, c["src_kind"], c["dst_kind"],
                                                                src_kind, dst_kind))
              and f.expect(c["async"] == is_async, "%s: async=%s, expected %s" %
                           (label, c["async"], is_async))
              and f.expect(within(duration(c), nbytes / bandwidth * 1e9, COPY_TOLERANCE),
                           "%s: %d bytes took %d ns, expected ~%d ns at %.0f GB/s" %
                           (label, nbytes, duration(c), nbytes / bandwidth * 1e9, bandwidth / 1e9)))
        if not ok:
            break


def check_input_then_step(f, copies, steps_kernels):
    """Per step: its input copy ends before its first kernel starts, and (same stream) starts
    after the previous step's last kernel ended."""
    for i, (c, ks) in enumerate(zip(copies, steps_kernels)):
        if not f.expect(c["end_ns"] <= ks[0]["start_ns"],
                        "step %d: first kernel starts before its input copy ended" % i):
            break
        if i > 0 and c.get("stream") == ks[0].get("stream") and not f.expect(
                c["start_ns"] >= steps_kernels[i - 1][-1]["end_ns"],
                "step %d: input copy started before step %d's kernels ended" % (i, i - 1)):
            break


def check_busy(f, truth, low, high, smoke):
    """The band's upper end is the point (the planted problem must dominate; well_fed's lower end
    too); the lower ends of host-bound shapes only rule out a device that never worked, because a
    loaded machine delays a host-bound loop without limit."""
    busy = truth.busy_fraction()
    if not smoke:
        f.expect(low <= busy <= high, "busy fraction %.3f outside [%.2f, %.2f]" % (busy, low, high),
                 timing=True)
    return busy


# ---- the shapes ------------------------------------------------------------------------------

def starved_shape(name, batch_kib, gap_ms):
    """data_starved and its Python variants: one pinned H2D copy then the MLP step, per step; the
    device waits ~gap_ms between steps."""
    layers = 4

    def check(f, t, steps, smoke):
        ks = check_kernel_sequence(f, t.kernels, mlp_step_names(layers), steps, MLP_NS)
        h2d = t.h2d()
        check_copies(f, h2d, steps, batch_kib * 1024, "pinned", "device", True, BW_PINNED_H2D,
                     "input copy")
        if ks and len(h2d) == steps:
            check_input_then_step(f, h2d, ks)
            # The mean, not the median: a queue of loader threads can deliver two batches back
            # to back and then none for two periods.
            gaps = [h2d[i]["start_ns"] - ks[i - 1][-1]["end_ns"] for i in range(1, steps)]
            if gaps and not smoke:
                f.expect(statistics.mean(gaps) >= 0.5 * gap_ms * 1e6,
                         "mean idle gap before an input copy is %.2f ms, expected >= %.1f ms" %
                         (statistics.mean(gaps) / 1e6, 0.5 * gap_ms), timing=True)
        return {"busy": check_busy(f, t, 0.01, 0.45, smoke), "kernels": len(t.kernels),
                "h2d_pinned": len(h2d)}
    return name, ["--layers", str(layers), "--batch-kib", str(batch_kib)], check


def check_pageable(f, t, steps, smoke):
    samples, sample_kib, layers = (8 if smoke else 128), 32, 1
    ks = check_kernel_sequence(f, t.kernels, mlp_step_names(layers), steps, PAGEABLE_NS)
    h2d = t.h2d()
    check_copies(f, h2d, steps * samples, sample_kib * 1024, "pageable", "device", True,
                 BW_PAGEABLE_H2D, "sample copy")
    if ks and len(h2d) == steps * samples:
        for i, (cs, k) in enumerate(zip(chunks(h2d, samples), ks)):
            if not f.expect(cs[-1]["end_ns"] <= k[0]["start_ns"],
                            "step %d: kernels started before the batch was copied" % i):
                break
            if i > 0 and not f.expect(cs[0]["start_ns"] >= ks[i - 1][-1]["end_ns"],
                                      "step %d: copies overtook step %d's kernels" % (i, i - 1)):
                break
    return {"busy": check_busy(f, t, 0.005, 0.75, smoke), "kernels": len(t.kernels),
            "h2d_pageable": len(h2d)}


def check_sync_heavy(f, t, steps, smoke):
    layers, log_ms = 2, 7.0
    ks = check_kernel_sequence(f, t.kernels, mlp_step_names(layers), steps, MLP_NS)
    d2h = t.d2h()
    check_copies(f, d2h, steps, 4, "device", "pageable", False, BW_PAGEABLE_D2H, "loss read-back")
    if ks and len(d2h) == steps:
        for i, (c, k) in enumerate(zip(d2h, ks)):
            if not f.expect(c["start_ns"] >= k[-1]["end_ns"],
                            "step %d: loss read before the step's kernels ended" % i):
                break
            if i + 1 < steps and not f.expect(
                    ks[i + 1][0]["start_ns"] >= c["end_ns"] + (0 if smoke else 0.5 * log_ms * 1e6),
                    "step %d: next step started %.2f ms after the loss read, expected >= %.1f ms "
                    "of log_metrics" % (i, (ks[i + 1][0]["start_ns"] - c["end_ns"]) / 1e6,
                                        0.5 * log_ms)):
                break
    return {"busy": check_busy(f, t, 0.01, 0.50, smoke), "kernels": len(t.kernels),
            "d2h_sync": len(d2h)}


def check_launch_bound(f, t, steps, smoke):
    per_step = 8 if smoke else 200
    names = ["bias_add", "relu_inplace", "scale_inplace", "residual_add"] * (per_step // 4)
    check_kernel_sequence(f, t.kernels, names, steps, TINY_NS)
    gaps = [b["start_ns"] - a["end_ns"] for a, b in zip(t.kernels, t.kernels[1:])]
    median_gap = statistics.median(gaps) if gaps else 0
    if not smoke:
        f.expect(median_gap >= 1000, "median gap between tiny kernels is %d ns: not launch bound"
                 % median_gap, timing=True)
    return {"busy": check_busy(f, t, 0.005, 0.75, smoke), "kernels": len(t.kernels),
            "median_gap_us": round(median_gap / 1e3, 2)}


def check_allocator_churn(f, t, steps, smoke):
    layers, act_kib = 32, 256
    nbytes = act_kib * 1024
    names = ["forward_layer"] * layers + ["backward_layer"] * layers
    ks = check_kernel_sequence(f, t.kernels, names, steps, CHURN_NS)
    per_step = 2 * layers
    allocs = [a for a in t.allocs if a["bytes"] == nbytes and a.get("memory_kind") == "device"]
    frees = [r for r in t.frees if r["bytes"] == nbytes]
    # The C++ program allocates its input buffer (same size) before the loop; Python does not.
    extra = len(allocs) - steps * per_step
    f.expect(extra in (0, 1), "%d activation-sized cudaMalloc, expected %d (+1 input)" %
             (len(allocs), steps * per_step))
    f.expect(len(frees) - steps * per_step == extra, "%d activation-sized cudaFree, expected %d" %
             (len(frees), steps * per_step + extra))
    step_allocs = chunks(allocs[extra:], per_step)
    step_frees = chunks(frees[:steps * per_step], per_step)
    if ks and len(step_allocs) == steps and len(step_frees) == steps:
        for i in range(steps):
            if not f.expect(step_allocs[i][-1]["start_ns"] <= ks[i][0]["start_ns"],
                            "step %d: a kernel ran before the step's allocations" % i):
                break
            if not f.expect(step_frees[i][0]["start_ns"] >= ks[i][-1]["end_ns"],
                            "step %d: memory freed before the step's kernels ended (cudaFree "
                            "must synchronise)" % i):
                break
    return {"busy": check_busy(f, t, 0.005, 0.70, smoke), "kernels": len(t.kernels),
            "mallocs": len(allocs), "frees": len(frees)}


def check_well_fed(f, t, steps, smoke):
    layers, batch_kib = 4, 4096
    ks = check_kernel_sequence(f, t.kernels, mlp_step_names(layers), steps, WELL_FED_NS)
    h2d = t.h2d()
    check_copies(f, h2d, steps, batch_kib * 1024, "pinned", "device", True, BW_PINNED_H2D,
                 "input copy")
    overlaps = 0
    if ks and len(h2d) == steps:
        f.expect(h2d[0].get("stream") != ks[0][0].get("stream"),
                 "copies and kernels share a stream")
        check_input_then_step(f, h2d, ks)
        for c in h2d:
            overlaps += any(k["start_ns"] < c["end_ns"] and c["start_ns"] < k["end_ns"]
                            for k in t.kernels)
        if steps >= 4:
            f.expect(overlaps >= steps // 2, "only %d of %d copies overlap a kernel" %
                     (overlaps, steps), timing=True)
    return {"busy": check_busy(f, t, 0.95, 1.0, smoke), "kernels": len(t.kernels),
            "copies_overlapping_kernels": overlaps}


def check_nvtx_ranges(f, t, steps, smoke):
    """The phases are synchronised, so each range's device idle share is known: data ~1, the
    compute phases ~0."""
    layers = 4
    ks = check_kernel_sequence(f, t.kernels, mlp_step_names(layers), steps, NVTX_NS)
    h2d = t.h2d()
    check_copies(f, h2d, steps, 4 << 20, "pinned", "device", True, BW_PINNED_H2D, "input copy")
    if ks and len(h2d) == steps:
        check_input_then_step(f, h2d, ks)
    names = ["step", "data", "forward", "backward", "optimizer"]
    by_name = dict((n, [r for r in t.ranges if r["name"] == n]) for n in names)
    for n in names:
        f.expect(len(by_name[n]) == steps, "%d '%s' ranges, expected %d" %
                 (len(by_name[n]), n, steps))
    for r in t.ranges:
        if r["name"] != "step" and not f.expect(
                r["depth"] == 1 and any(s["start_ns"] <= r["start_ns"] and
                                        r["end_ns"] <= s["end_ns"] for s in by_name["step"]),
                "range '%s' is not nested in a 'step'" % r["name"]):
            break
    idle = {}
    for n in names + ["compute"]:
        spans = by_name[n] if n != "compute" else [r for r in t.ranges if r["name"] in names[2:]]
        total = sum(r["end_ns"] - r["start_ns"] for r in spans)
        busy = sum(t.busy_fraction(r["start_ns"], r["end_ns"]) * (r["end_ns"] - r["start_ns"])
                   for r in spans)
        idle[n] = 1.0 - busy / total if total else 0.0
    if not smoke and len(by_name["data"]) == steps:
        # data: the previous step ended with a synchronisation, so the device is idle throughout.
        # The compute phases are busy but for launch latency and thread wake-ups after their
        # synchronisation, which a loaded machine stretches to milliseconds.
        f.expect(idle["data"] >= 0.95, "idle in 'data' is %.3f, expected ~1" % idle["data"])
        f.expect(idle["compute"] <= 0.6, "idle in forward/backward/optimizer is %.3f, expected a "
                 "few %% (up to ~0.35 on a loaded machine)" % idle["compute"], timing=True)
    measured = dict(("idle_" + n, idle[n]) for n in names)
    measured.update({"busy": check_busy(f, t, 0.05, 0.70, smoke), "kernels": len(t.kernels)})
    return measured


def check_multi_thread(f, t, steps, smoke):
    threads, layers = 8, 1
    by_stream = {}
    for k in t.kernels:
        by_stream.setdefault(k.get("stream"), []).append(k)
    f.expect(len(by_stream) == threads, "kernels ran on %d streams, expected %d" %
             (len(by_stream), threads))
    for stream, ks in sorted(by_stream.items(), key=lambda kv: str(kv[0])):
        check_kernel_sequence(f, ks, mlp_step_names(layers), steps, MLP_NS,
                              "stream %s" % stream)
    tids = set(k.get("tid") for k in t.kernels)
    f.expect(len(tids) == threads, "kernels came from %d threads, expected %d" %
             (len(tids), threads))
    concurrent = any(a["start_ns"] < b["end_ns"] and b["start_ns"] < a["end_ns"]
                     for a, b in zip(t.kernels, t.kernels[1:])
                     if a.get("stream") != b.get("stream"))
    f.expect(concurrent, "no two streams ever ran kernels at the same time")
    h2d, d2h = t.h2d(), t.d2h()
    f.expect(len(h2d) == threads * steps and len(d2h) == threads * steps,
             "%d H2D and %d D2H copies, expected %d each" % (len(h2d), len(d2h), threads * steps))
    return {"busy": check_busy(f, t, 0.10, 1.0, smoke), "kernels": len(t.kernels),
            "streams": len(by_stream)}


SHAPES = dict((name, (args, check)) for name, args, check in [
    starved_shape("data_starved", 4096, 15.0),
    starved_shape("data_starved_pipe", 1024, 15.0),
    starved_shape("data_starved_queue", 1024, 15.0),
    starved_shape("data_starved_workers", 256, 15.0),
    starved_shape("data_starved_sleep", 1024, 15.0),
    starved_shape("data_starved_socket", 256, 15.0),
    ("pageable_copies", ["--layers", "1", "--sample-kib", "32"], check_pageable),
    ("sync_heavy", ["--layers", "2", "--log-ms", "7"], check_sync_heavy),
    ("launch_bound", [], check_launch_bound),
    ("allocator_churn", ["--layers", "32", "--act-kib", "256"], check_allocator_churn),
    ("well_fed", ["--layers", "4", "--batch-kib", "4096"], check_well_fed),
    ("multi_thread", ["--threads", "8", "--layers", "1"], check_multi_thread),
    ("nvtx_ranges", [], check_nvtx_ranges),
])
DEFAULT_STEPS = {"data_starved": 40, "data_starved_pipe": 40, "data_starved_queue": 40,
                 "data_starved_workers": 40, "data_starved_sleep": 40, "data_starved_socket": 40,
                 "pageable_copies": 30, "sync_heavy": 60, "launch_bound": 100,
                 "allocator_churn": 60, "well_fed": 25, "multi_thread": 25, "nvtx_ranges": 25}
# Workloads that log their own NVTX ranges with --ranges-out FILE.
RANGE_LOGGING = ("nvtx_ranges",)
# Smoke runs: a few steps of smaller work.
SMOKE_ARGS = {"pageable_copies": ["--samples", "8"], "launch_bound": ["--kernels", "8"]}


def parse_summary(stdout):
    for line in reversed(stdout.splitlines()):
        if line.startswith("workload="):
            return dict(part.split("=", 1) for part in line.split())
    return None


def load_truth(path):
    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def run_program(shape, program, python, steps, smoke, truth_path):
    args, _ = SHAPES[shape]
    argv = ([python, program] if python else [program]) + args + ["--steps", str(steps)]
    if smoke:
        argv += SMOKE_ARGS.get(shape, [])
    if shape in RANGE_LOGGING:
        argv += ["--ranges-out", truth_path + ".ranges"]
    env = dict((k, v) for k, v in os.environ.items() if not k.startswith("SIMGPU_"))
    env["SIMGPU_TRUTH"] = truth_path
    proc = subprocess.run(argv, env=child_env(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=300)
    return argv, proc


def self_test(program, python):
    """Every mutation of a good data_starved truth must be rejected; the original accepted."""
    steps = 3
    with tempfile.TemporaryDirectory(prefix="gsw-selftest-") as tmp:
        path = os.path.join(tmp, "truth.jsonl")
        argv, proc = run_program("data_starved", program, python, steps, True, path)
        if proc.returncode != 0:
            print("self-test: %s exited with %d\n%s" % (" ".join(argv), proc.returncode,
                                                        proc.stderr))
            return 1
        good = load_truth(path)
    check = SHAPES["data_starved"][1]

    def kernels(records):
        return sorted((r for r in records if r["kind"] == "kernel"), key=lambda r: r["start_ns"])

    def copies(records):
        return [r for r in records if r["kind"] == "memcpy"]

    def swap_copy_and_kernel(rs):  # the step's first kernel now runs before its input copy
        c, k = copies(rs)[0], kernels(rs)[0]
        c["start_ns"], c["end_ns"], k["start_ns"], k["end_ns"] = (
            k["start_ns"], k["start_ns"] + (c["end_ns"] - c["start_ns"]), c["start_ns"],
            c["start_ns"] + (k["end_ns"] - k["start_ns"]))

    def drop_last_kernel(rs):
        rs.remove(kernels(rs)[-1])

    def stretch_kernel(rs):
        k = kernels(rs)[5]
        k["end_ns"] += (k["end_ns"] - k["start_ns"]) // 2

    def pageable_input(rs):
        copies(rs)[1]["src_kind"] = "pageable"

    def rename_kernel(rs):
        k = kernels(rs)[1]
        k["demangled"] = k["name"] = "backward_layer"

    def sync_copy(rs):
        copies(rs)[2]["async"] = False

    def out_of_submission_order(rs):  # two same-named kernels run in the wrong order
        k1, k2 = kernels(rs)[1], kernels(rs)[2]
        k1["correlation_id"], k2["correlation_id"] = k2["correlation_id"], k1["correlation_id"]

    failures = []
    original = Failures()
    check(original, Truth(copy.deepcopy(good)), steps, True)
    if original.items:
        failures.append("the intact truth was rejected: %s" % original.items)
    for mutate in (swap_copy_and_kernel, drop_last_kernel, stretch_kernel, pageable_input,
                   rename_kernel, sync_copy, out_of_submission_order):
        records = copy.deepcopy(good)
        mutate(records)
        f = Failures()
        check(f, Truth(records), steps, True)
        print("self-test: %-24s -> %s" % (mutate.__name__, f.items[0] if f.items else "ACCEPTED"))
        if not f.items:
            failures.append("%s was not detected" % mutate.__name__)
    for item in failures:
        print("  - " + item)
    print("self-test: %s" % ("FAILED" if failures else "ok"))
    return 1 if failures else 0


def run(shape, program, python, smoke):
    """Runs and checks the workload; once more if only timing checks failed. Returns 0 or 1."""
    failed, timing_only = run_once(shape, program, python, smoke)
    if failed and timing_only:
        print("  (only timing checks failed: running %s once more)" % shape)
        failed, _ = run_once(shape, program, python, smoke)
    return 1 if failed else 0


def run_once(shape, program, python, smoke):
    check = SHAPES[shape][1]
    steps = 3 if smoke else DEFAULT_STEPS[shape]
    with tempfile.TemporaryDirectory(prefix="gsw-truth-") as tmp:
        truth_path = os.path.join(tmp, "truth.jsonl")
        argv, proc = run_program(shape, program, python, steps, smoke, truth_path)
        f = Failures()
        label = "%s (%s)" % (shape, os.path.basename(python) if python else "nvcc")
        if proc.returncode != 0:
            print("%s: FAILED: %s exited with %d\n%s%s" % (label, " ".join(argv), proc.returncode,
                                                           proc.stdout, proc.stderr))
            return True, False
        summary = parse_summary(proc.stdout)
        f.expect(summary is not None and summary.get("workload") == shape and
                 summary.get("steps") == str(steps),
                 "summary line missing or wrong: %r" % (proc.stdout[-300:],))
        try:
            records = load_truth(truth_path)
            ranges = load_truth(truth_path + ".ranges") if shape in RANGE_LOGGING else []
        except OSError as e:
            print("%s: FAILED: no truth file (%s); is LD_LIBRARY_PATH pointing at simgpu?" %
                  (label, e))
            return True, False
        measured = check(f, Truth(records, ranges), steps, smoke)
    print("%s: %s steps=%d %s wall_ms=%s" % (
        label, "ok" if not f.items else "FAILED", steps,
        " ".join("%s=%s" % (k, ("%.3f" % v) if isinstance(v, float) else v)
                 for k, v in measured.items()),
        (summary or {}).get("wall_ms", "?")))
    for item in f.items:
        print("  - " + item)
    return bool(f.items), f.timing_only


PYTHON_SHAPES = ["data_starved", "pageable_copies", "sync_heavy", "launch_bound",
                 "allocator_churn", "well_fed", "data_starved_pipe", "data_starved_queue",
                 "data_starved_workers", "data_starved_sleep", "data_starved_socket"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("shape", choices=sorted(SHAPES) + ["all-python", "self-test"],
                   help="a workload; all-python: every Python workload in --program (a folder); "
                        "self-test: check the checker with --program data_starved.py")
    p.add_argument("--program", required=True,
                   help="executable, script with --python, or the py/ folder for all-python")
    p.add_argument("--python", help="interpreter that runs --program")
    p.add_argument("--smoke", action="store_true", help="few steps; counts and ordering only")
    a = p.parse_args()
    if a.shape == "self-test":
        return self_test(a.program, a.python)
    if a.shape != "all-python":
        return run(a.shape, a.program, a.python, a.smoke)
    if not a.python:
        p.error("all-python needs --python")
    failed = 0
    for shape in PYTHON_SHAPES:
        failed |= run(shape, os.path.join(a.program, shape + ".py"), a.python, a.smoke)
    return failed


if __name__ == "__main__":
    sys.exit(main())
