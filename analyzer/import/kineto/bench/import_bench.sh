#!/usr/bin/env bash
# import_bench.sh — gsanalyze vs Holistic Trace Analysis on one ≥ 1 GB PyTorch profiler trace, in one
# run (BENCHMARKS.md, "PyTorch profiler import"). Not run by ctest: it takes minutes and GBs.
#
#   analyzer/import/kineto/bench/import_bench.sh BUILD_DIR [WORK_DIR] [BYTES]
#
# Builds WORK_DIR/big/big.json (BYTES, default 1.05e9) from the real V100 trace in testdata/ by
# replicating its steps (replicate_steps.py), then times `gsanalyze report` on it and HTA 0.5.0's
# TraceAnalysis(trace_dir=...) load (the test venv's interpreter) with /usr/bin/time -v: wall time,
# peak RSS; events/s = the JSON's events / wall time.
set -euo pipefail
build=${1:?BUILD_DIR}
work=${2:-/tmp/gs_kineto_bench}
bytes=${3:-1.05e9}
here=$(cd "$(dirname "$0")" && pwd)
venv_python=${GS_TEST_VENV_PYTHON:-$HOME/.cache/gpustall/venv/bin/python3}
mkdir -p "$work/big"
line=$(python3 "$here/replicate_steps.py" "$here/../testdata/v100_resnet50_workers0.pt.trace.json.gz" \
       "$work/big/big.json" "$bytes")
echo "$line"
events=$(echo "$line" | sed -E 's/.*\(([0-9]+) events.*/\1/')
size=$(stat -c %s "$work/big/big.json")

measure() {  # NAME COMMAND...
  local name=$1; shift
  /usr/bin/time -v "$@" > "$work/$name.out" 2> "$work/$name.time" || { echo "$name failed:"; tail -5 "$work/$name.time"; return; }
  local wall rss secs
  wall=$(grep "Elapsed (wall clock)" "$work/$name.time" | awk '{print $NF}')
  rss=$(grep "Maximum resident set size" "$work/$name.time" | awk '{print $NF}')
  secs=$(echo "$wall" | awk -F: '{ if (NF==3) print $1*3600+$2*60+$3; else print $1*60+$2 }')
  awk -v n="$name" -v s="$secs" -v r="$rss" -v z="$size" -v e="$events" 'BEGIN {
    printf "%-10s wall %8.1f s  peak RSS %7.0f MiB (%.2f x the JSON)  %9.0f events/s\n", n, s, r / 1024, r * 1024 / z, e / s }'
}
echo "JSON: $size bytes, $events events"
measure gsanalyze "$build/analyzer/gsanalyze" report "$work/big/big.json"
if [[ -x $venv_python ]]; then
  measure hta "$venv_python" -c "
import logging, sys, warnings
warnings.simplefilter('ignore')
from hta.configs.config import logger
logger.setLevel(logging.ERROR)
from hta.trace_analysis import TraceAnalysis
TraceAnalysis(trace_dir=sys.argv[1])" "$work/big"
else
  echo "hta: no test venv ($venv_python): run tools/setup"
fi
