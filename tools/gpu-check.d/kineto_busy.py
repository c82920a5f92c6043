#!/usr/bin/env python3
"""kineto_busy.py — GPU busy time and kernel count from a torch.profiler (Kineto) Chrome trace.

    kineto_busy.py TRACE.json[.gz]     prints one JSON object

Kernels are the complete events ("ph": "X") of category "kernel"; copies/memsets are "gpu_memcpy"
and "gpu_memset". compute_busy_ns is the union of the kernels' [ts, ts+dur) intervals over all
devices and streams (what the agent's gsanalyze calls compute-busy), busy_ns the union with copies
and memsets too. Chrome-trace times are microseconds (floats); results are nanoseconds.
"""
import gzip
import json
import sys


def union_ns(intervals):
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        elif e > cur_e:
            cur_e = e
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def summarise(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        data = json.load(f)
    events = data.get("traceEvents", data) if isinstance(data, dict) else data
    kernels, copies = [], []
    for ev in events:
        if not isinstance(ev, dict) or ev.get("ph") != "X":
            continue
        cat = ev.get("cat", "")
        if cat not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        s = int(round(float(ev["ts"]) * 1000))
        e = s + int(round(float(ev.get("dur", 0)) * 1000))
        (kernels if cat == "kernel" else copies).append((s, e))
    every = kernels + copies
    return {"kernels": len(kernels), "copies_memsets": len(copies),
            "compute_busy_ns": union_ns(kernels), "busy_ns": union_ns(every),
            "span_ns": (max(e for _, e in every) - min(s for s, _ in every)) if every else 0}


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    print(json.dumps(summarise(sys.argv[1])))
