"""hta_breakdown.py -- HTA's view of a Kineto trace, as JSON on stdout (run by hta_idle_test.py with
the test venv's interpreter, which has holistictraceanalysis 0.5.0 and its pandas).

    hta_breakdown.py TRACE_DIR

Prints {"ranks", "gpu_events", "kernels_linked", "temporal": {rank: {...}},
"idle": [{"stream", "idle_category", "idle_time_us", "count"}...]} for rank 0: what HTA parsed,
how many GPU events it linked to a runtime call by correlation, its temporal breakdown and its
idle-time breakdown per stream (consecutive_kernel_delay at HTA's default, 30 ns).
"""
import json
import logging
import sys
import warnings


def main(trace_dir):
    warnings.simplefilter("ignore")  # pandas FutureWarnings from HTA 0.5.0's own calls
    from hta.configs.config import logger
    logger.setLevel(logging.ERROR)
    from hta.trace_analysis import TraceAnalysis

    analysis = TraceAnalysis(trace_dir=trace_dir)
    trace = analysis.t
    df = trace.get_trace(0)
    gpu = df[df["stream"].ne(-1)]
    kernel_cats = {trace.symbol_table.get_sym_id_map().get(c, -1) for c in ("kernel", "gpu_memcpy", "gpu_memset")}
    gpu = gpu[gpu["cat"].isin(kernel_cats)]
    temporal = analysis.get_temporal_breakdown(visualize=False)
    idle, stats = analysis.get_idle_time_breakdown(visualize=False, show_idle_interval_stats=True)
    counts = {}
    if stats is not None:
        for category, row in stats.iterrows():
            counts[(int(row["stream"]), str(category))] = int(row["count"])
    names = {0: "host_wait", 1: "kernel_wait", 2: "other"}
    out = {
        "ranks": sorted(int(r) for r in trace.get_ranks()),
        "gpu_events": int(len(gpu)),
        "kernels_linked": int((gpu["index_correlation"] > 0).sum()),
        "temporal": {str(int(r["rank"])): {"idle_us": float(r["idle_time(us)"]),
                                           "kernel_time_us": float(r["kernel_time(us)"])}
                     for _, r in temporal.iterrows()},
        "idle": [],
    }
    for _, r in idle.iterrows():
        category = r["idle_category"]
        category = names.get(category, str(category))
        out["idle"].append({"stream": int(r["stream"]), "idle_category": category,
                            "idle_time_us": float(r["idle_time"])})
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
