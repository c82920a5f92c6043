#!/usr/bin/python3
"""replicate_steps.py -- a large PyTorch profiler trace made of a real one's steps, for the import
benchmark (BENCHMARKS.md, "PyTorch profiler import").

    replicate_steps.py IN.json[.gz] OUT.json MIN_BYTES

Writes IN's metadata once and its timed events again and again, each copy shifted in time by the
span of IN's events (so the copies follow one another like further steps) and its correlation and
flow ids shifted past the previous copy's, until OUT holds at least MIN_BYTES. Streams its output:
memory stays that of IN.
"""
import gzip
import json
import sys


def main(src, dst, min_bytes):
    with (gzip.open(src, "rt") if src.endswith(".gz") else open(src)) as f:
        doc = json.load(f)
    events = doc.pop("traceEvents")
    meta = [e for e in events if e.get("ph") == "M"]
    timed = [e for e in events if e.get("ph") != "M" and isinstance(e.get("ts"), (int, float))]
    lo = min(e["ts"] for e in timed)
    hi = max(e["ts"] + e.get("dur", 0) for e in timed)
    span = hi - lo + 1
    ids = [e["args"]["correlation"] for e in timed if isinstance(e.get("args", {}).get("correlation"), int)]
    ids += [e["id"] for e in timed if isinstance(e.get("id"), int)]
    id_span = max(ids) - min(ids) + 1 if ids else 0  # dense, as a longer run's ids would be
    written = copies = count = 0
    with open(dst, "w") as out:
        head = json.dumps(doc)[:-1]
        out.write(head + (", " if doc else "") + '"traceEvents": [\n')
        first = True
        for e in meta:
            out.write(("" if first else ",\n") + json.dumps(e))
            first = False
        while written < min_bytes:
            shift, id_shift = copies * span, copies * id_span
            chunk = []
            for e in timed:
                c = dict(e)
                c["ts"] = e["ts"] + shift
                if "args" in e and isinstance(e["args"].get("correlation"), int):
                    c["args"] = dict(e["args"], correlation=e["args"]["correlation"] + id_shift)
                if isinstance(e.get("id"), int):
                    c["id"] = e["id"] + id_shift
                chunk.append(json.dumps(c))
            text = ",\n".join(chunk)
            out.write(",\n" + text)
            written += len(text)
            copies += 1
            count += len(chunk)
        out.write("\n]}\n")
    print("%s: %d copies of %d events (%d events, %.2f GB)" % (dst, copies, len(timed), count + len(meta),
                                                                written / 1e9))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(float(sys.argv[3])))
