#!/usr/bin/env python3
"""Seeds for gs_fuzz_kineto: a few KB of each real PyTorch profiler trace of
analyzer/import/kineto/testdata/, still a valid trace.

    tests/fuzz/make_kineto_seeds.py      # rewrites tests/fuzz/corpus/kineto/*.json

From each trace: its first GPU operations (with a kernel, a copy, a memset and an NCCL kernel
among them when the trace has any), the runtime calls and flow arrows with their correlation ids, the CPU ops
and annotations that enclose those calls on their thread (ProfilerStep#N among them), the process
and thread names, and the top-level members (deviceProperties cut to the devices used). The
fuzzer starts from every category and argument that the importer reads; fuzz.regression.*
(fuzz_regression_test.cc) checks that each seed is accepted as a trace with GPU work.
"""
import gzip
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "analyzer", "import", "kineto", "testdata")
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus", "kineto")
TRACES = {  # seed name: test trace
    "a100_alexnet": "a100_alexnet.pt.trace.json.gz",
    "a100_triton": "a100_triton.json.gz",
    "mi250_rocm": "mi250_rocm6.2.json.gz",
    "v100_legacy_categories": "v100_resnet50_workers0.pt.trace.json.gz",
    "multirank_nccl": "multirank/rank-0.json.gz",
}
GPU = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset"}
CALLS = {"cuda_runtime", "cuda_driver", "Runtime", "cuda_sync"}
ENCLOSING = {"cpu_op", "Operator", "user_annotation", "python_function", "gpu_user_annotation"}
WANT_GPU_OPS = 4


def correlation(e):
    args = e.get("args") or {}
    return args.get("correlation", args.get("External id"))


def seed(trace):
    events = trace["traceEvents"]
    gpu = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") in GPU), key=lambda e: e["ts"])
    chosen = gpu[:WANT_GPU_OPS]
    for wanted in (lambda e: e["cat"] in ("kernel", "Kernel"), lambda e: e["cat"] in ("gpu_memcpy", "Memcpy"),
                   lambda e: e["cat"] in ("gpu_memset", "Memset"), lambda e: "nccl" in e.get("name", "").lower()):
        if not any(wanted(e) for e in chosen):
            chosen += [e for e in gpu if wanted(e)][:1]
    ids = {correlation(e) for e in chosen} - {None}
    calls = [e for e in events if e.get("ph") == "X" and e.get("cat") in CALLS and correlation(e) in ids]
    flows = [e for e in events if e.get("ph") in ("s", "f") and e.get("id") in ids]
    enclosing = [
        e for e in events
        if e.get("ph") == "X" and e.get("cat") in ENCLOSING and any(
            c["pid"] == e["pid"] and c["tid"] == e["tid"] and e["ts"] <= c["ts"] <= e["ts"] + e.get("dur", 0)
            for c in calls)
    ]
    kept = chosen + calls + flows + enclosing
    tracks = {(e.get("pid"), e.get("tid")) for e in kept}
    pids = {p for p, _ in tracks}
    names = [e for e in events if e.get("ph") == "M" and e.get("pid") in pids and
             (e.get("name") == "process_name" or (e.get("pid"), e.get("tid")) in tracks)]
    out = {k: v for k, v in trace.items() if k != "traceEvents"}
    devices = {(e.get("args") or {}).get("device") for e in chosen}
    if isinstance(out.get("deviceProperties"), list):
        out["deviceProperties"] = [d for d in out["deviceProperties"] if d.get("id") in devices]
    out["traceEvents"] = sorted(names + kept, key=lambda e: (e.get("ph") != "M", e.get("ts", 0)))
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, path in TRACES.items():
        with gzip.open(os.path.join(DATA, path), "rt") as f:
            trace = json.load(f)
        text = json.dumps(seed(trace), separators=(",", ":"))
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            f.write(text + "\n")
        print(f"{name}.json: {len(text)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
