#!/usr/bin/env bash
# GPU work in device-tool calls (each under 10 minutes):
#   scripts/gpu_batch.sh tests   GPU test layers (tests/gpu: launches, streams, CAI sync with
#                                CuPy/PyTorch producers, graphs, collectives, tiles, examples),
#                                the examples, the CuPy stream diagnostic
#   scripts/gpu_batch.sh bench [STEP...]
#                                benchmarks side by side (safe vs raw Numba vs CuPy/cuBLAS);
#                                STEPs pick some (bandwidth launch_latency graph_replay coop
#                                sgemm_variants collectives tiles axis_mapping rows gemv
#                                irregular sanitizer_corpus decode_06b_c0 decode_06b_c4096
#                                decode_4b_c0 decode_4b_c4096 primitives shared_atomic_probe gemm_bf16); the decode steps take up to
#                                ~9 minutes each (the PyTorch anchor with torch.compile runs
#                                inside) and run only when named: one or two per call. After
#                                unpacking all of them into benchmarks/results, `python
#                                benchmarks/decode.py --merge` writes the side-by-side
#                                benchmarks/results/decode.md
# Results land in one tarball $OUT/results-PHASE.tgz (the device tool brings back at most 8
# files); unpack into benchmarks/results. On the lent H200 machine (no network) run with the
# carried wheels, see docs/performance.md.
set -uo pipefail
PHASE=${1:-tests}
shift || true
STEPS=" $* "
FINAL=${OUT:-benchmarks/results}
export OUT=/tmp/ss_results
rm -rf "$OUT"  # a warm machine keeps /tmp between calls
mkdir -p "$OUT" "$FINAL"
trap 'tar czf "$FINAL/results-$PHASE.tgz" -C "$OUT" .' EXIT
want() { [ "$STEPS" = "  " ] || [[ "$STEPS" == *" $1 "* ]]; }
export PYTHONUNBUFFERED=1
step() {  # step SECONDS NAME COMMAND...: one step under a time limit, its output in NAME.log
  local limit=$1 name=$2; shift 2
  echo "=== $name"
  timeout "$limit" "$@" 2>&1 | grep -v -i "warn" | tee "$OUT/$name.log" | tail -n 60
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
if [ "$PHASE" = tests ]; then
  timeout 420 python3 -m pytest tests/gpu tests/examples tests/ptx tests/unit -q -p no:cacheprovider \
    -W ignore::numba.core.errors.NumbaPerformanceWarning -rf \
    --deselect tests/unit/test_tooling.py >"$OUT/pytest_gpu.log" 2>&1
  grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/pytest_gpu.log" | tail -n 40
  step 120 examples python3 examples/run_all.py
  step 30 diag_cupy_stream python3 scripts/diag_cupy_stream.py
else
  want diag_cupy_stream && step 30 diag_cupy_stream python3 scripts/diag_cupy_stream.py
  want bandwidth && step 60 bandwidth python3 benchmarks/bandwidth.py
  want launch_latency && step 90 launch_latency python3 benchmarks/launch_latency.py
  want graph_replay && step 45 graph_replay python3 benchmarks/graph_replay.py
  want coop && step 120 coop python3 benchmarks/coop.py
  if want sgemm_variants && [ -f benchmarks/sgemm_variants.py ]; then
    step 150 sgemm_variants python3 benchmarks/sgemm_variants.py
  fi
  want collectives && step 60 collectives python3 benchmarks/collectives.py
  want tiles && step 60 tiles python3 benchmarks/tiles.py
  want axis_mapping && step 30 axis_mapping python3 benchmarks/axis_mapping.py
  want rows && step 60 rows python3 benchmarks/rows.py
  want gemv && step 90 gemv python3 benchmarks/gemv.py
  # batch-1 Qwen3 decode vs the PyTorch anchor (shared/anchors/decode_anchor.py), one
  # (shape, context) per step; the anchor's checkpoint of a shape is kept in
  # $TMPDIR/simtsafe_decode_bench for the shape's other context on a warm machine
  anchor_budget="--compile-timeout 150 --deadline 300"
  for pair in 06b:0.6b:0 06b:0.6b:4096 4b:4b:0 4b:4b:4096; do
    IFS=: read -r tag shape ctx <<<"$pair"
    if [[ "$STEPS" == *" decode_${tag}_c${ctx} "* ]]; then  # only when named: ~9 minutes each
      step 570 "decode_${tag}_c${ctx}" python3 benchmarks/decode.py --configs "$shape" \
        --contexts "$ctx" --anchor-args "$anchor_budget" --anchor-timeout 480
    fi
  done
  # compaction (append buffer) vs raw twins and CuPy x[x > t]; hash insert/find at load 0.5/0.9;
  # TSDF fusion (examples/tsdf) allocation/integration vs raw twins at 640x480, lost blocks
  want irregular && step 300 irregular python3 benchmarks/irregular.py
  want primitives && step 420 primitives python3 benchmarks/primitives.py
  want shared_atomic_probe && step 90 shared_atomic_probe python3 benchmarks/shared_atomic_probe.py
  # bf16 GEMM 8192^3 on tensor cores: simtsafe.mma vs raw twin vs torch.matmul vs Triton
  want gemm_bf16 && step 300 gemm_bf16 python3 benchmarks/gemm_bf16.py
  if want sanitizer_corpus; then
    if command -v compute-sanitizer >/dev/null; then
      # compute-sanitizer vs simtsafe.sim.check on the checker corpus (each launch in its
      # own process with a time limit: a divergent barrier hangs the GPU kernel)
      step 420 sanitizer_corpus python3 benchmarks/sanitizer_corpus.py --all --sanitize --timeout 40 --jobs 15
    else
      echo "compute-sanitizer not on PATH: skipped benchmarks/sanitizer_corpus.py"
    fi
  fi
fi
