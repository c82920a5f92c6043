#!/usr/bin/python3
"""Checks a Chrome trace-event JSON file the way a viewer reads it (ctest analyzer.export.*).

Python's own json module parses it (a second parser, independent of the analyzer's), then:
every event has the fields its phase needs, flows pair up ("s" and "f" once per id), counters
("C") carry numbers only (a viewer plots each arg as a series), and the process/thread name
metadata is there. Exit 0 and a one-line summary, or 1 and the first problem.
"""
import collections
import json
import sys

NEEDED = {"X": ("name", "ph", "ts", "pid", "tid", "dur"),
          "M": ("name", "ph", "pid", "tid", "args"),
          "s": ("name", "ph", "ts", "pid", "tid", "id"),
          "f": ("name", "ph", "ts", "pid", "tid", "id", "bp"),
          "C": ("name", "ph", "ts", "pid", "args")}


def main(path):
    with open(path, encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    flows = collections.Counter()
    names = collections.Counter()
    counters = 0
    for e in events:
        need = NEEDED.get(e.get("ph"))
        if need is None:
            return "unexpected phase in %r" % (e,)
        missing = [k for k in need if k not in e]
        if missing:
            return "missing %s in %r" % (missing, e)
        if e["ph"] == "X" and e["dur"] < 0:
            return "negative duration in %r" % (e,)
        if e["ph"] == "C" and (not e["args"] or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in e["args"].values())):
            return "a counter without numbers in %r" % (e,)
        counters += e["ph"] == "C"
        if e["ph"] in "sf":
            flows[(e["ph"], e["id"])] += 1
        if e["ph"] == "M":
            names[e["name"]] += 1
    starts = {i for (ph, i) in flows if ph == "s"}
    ends = {i for (ph, i) in flows if ph == "f"}
    if starts != ends or any(n != 1 for n in flows.values()):
        return "flows do not pair up"
    if not names["process_name"] or not names["thread_name"]:
        return "no process/thread names"
    print("ok: %d events, %d flows, %d counter samples" % (len(events), len(starts), counters))
    return None


if __name__ == "__main__":
    problem = main(sys.argv[1])
    if problem:
        print(problem)
        sys.exit(1)
