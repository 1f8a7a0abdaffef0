#!/usr/bin/env bash
# One device-tool call: GPU test layers (tests/gpu includes the execution-model tests:
# streams, CAI sync with CuPy/PyTorch producers, graphs), examples, benchmarks (bandwidth,
# launch latency incl. CuPy/PyTorch and ordering cost, graph replay); results under $OUT.
# On the lent H200 machine (no network): run with the carried wheels, see docs/performance.md.
set -uo pipefail
OUT=${OUT:-benchmarks/results}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
python3 -m pytest tests/gpu tests/examples tests/ptx tests/unit -q -s -p no:cacheprovider \
  -W ignore::numba.core.errors.NumbaPerformanceWarning \
  --deselect tests/unit/test_tooling.py 2>&1 | tee "$OUT/pytest_gpu.log" | grep -E "passed|failed|differential counts"
python3 examples/run_all.py 2>&1 | tee "$OUT/examples.log"
python3 benchmarks/bandwidth.py 2>&1 | grep -v -i warn
python3 benchmarks/launch_latency.py 2>&1 | grep -v -i warn
python3 benchmarks/axis_mapping.py 2>&1 | grep -v -i warn
python3 benchmarks/checker_cpu.py 2>&1 | grep -v -i warn
if command -v compute-sanitizer >/dev/null; then
  # compute-sanitizer vs simtsafe.sim.check on the checker corpus (each launch in its own
  # process with a time limit: a divergent grid sync hangs the GPU kernel)
  python3 benchmarks/sanitizer_corpus.py --all --sanitize --timeout 120 --jobs 8 2>&1 | tail -45
else
  echo "compute-sanitizer not on PATH: skipped benchmarks/sanitizer_corpus.py"
fi
python3 benchmarks/graph_replay.py 2>&1 | grep -v -i warn
python3 benchmarks/tiles.py 2>&1 | grep -v -i warn
python3 benchmarks/collectives.py 2>&1 | grep -v -i warn
python3 benchmarks/coop.py 2>&1 | grep -v -i warn | tee "$OUT/coop.log"
