#!/usr/bin/env bash
# One device call of this round's measurements; every log and result file goes into one
# tarball $OUT/round-NAME.tgz (the device tool brings back at most 8 files).
#   scripts/gpu_round.sh NAME STEP...   STEPs: h200 (stop unless on an H200) tests tests_fill tests_records tests_acc tests_ports tests_decode slots attn latency gemv gemv_runs decode06 decode4b decode06_4096 decode4b_4096 gemm gemm_current wgsweep ptxv ncu_gemm sgemm irregular hash scan
#                                      primitives decode06_anchor pdl atomics histogram ncu ncu_hist attn_warps fused decode4b_oldvec oldnew
set -uo pipefail
NAME=$1; shift
FINAL=${OUT:-benchmarks/results}
export OUT=/tmp/ss_round
rm -rf "$OUT"; mkdir -p "$OUT" "$FINAL"
trap 'tar czf "$FINAL/round-$NAME.tgz" -C "$OUT" .' EXIT
export PYTHONUNBUFFERED=1
run() {  # each step re-packs the tarball, so a call cut short still brings back the steps done
  local limit=$1 name=$2; shift 2; echo "=== $name"; timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
  echo "rc $?"; tar czf "$FINAL/round-$NAME.tgz" -C "$OUT" .
}
for s in "$@"; do
  case $s in
    h200)  # the steps after it run on an H200 only (a call asking for one may get an H100)
      name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
      case "$name" in *H200*) ;; *) echo "=== h200: this is $name, the later steps are skipped"; exit 0 ;; esac ;;
    tests) run 220 pytest_gpu python3 -m pytest -n 12 -q -p no:cacheprovider -p no:benchmark tests/gpu tests/examples/test_decode.py
           grep -E "FAILED|ERROR|passed|failed" "$OUT/pytest_gpu.log" | tail -12 ;;
    tests_fill) run 200 pytest_fill python3 -m pytest -n 8 -q -p no:cacheprovider -p no:benchmark tests/gpu/test_async_fill_gpu.py \
                  tests/gpu/test_gemm_bf16_gpu.py tests/gpu/test_wgmma_gpu.py
                grep -E "FAILED|ERROR|passed|failed" "$OUT/pytest_fill.log" | tail -12 ;;
    tests_records) run 150 pytest_records python3 -m pytest -n 8 -q -p no:cacheprovider -p no:benchmark tests/gpu/test_records_gpu.py \
                     tests/gpu/test_tiles_gpu.py tests/gpu/test_vec_gpu.py
                   grep -E "FAILED|ERROR|passed|failed" "$OUT/pytest_records.log" | tail -12 ;;
    tests_acc) run 150 pytest_acc python3 -m pytest -n 8 -q -p no:cacheprovider -p no:benchmark tests/gpu/test_accumulator2d_gpu.py \
                 tests/gpu/test_histogram_vec_gpu.py tests/gpu/test_coop_gpu.py
               grep -E "FAILED|ERROR|passed|failed" "$OUT/pytest_acc.log" | tail -12 ;;
    tests_ports) run 150 pytest_ports python3 -m pytest -n 8 -q -p no:cacheprovider -p no:benchmark tests/gpu/test_port21_gpu.py \
                   tests/gpu/test_gemm_bf16_gpu.py tests/gpu/test_tuple_reduce_gpu.py
                 grep -E "FAILED|ERROR|passed|failed" "$OUT/pytest_ports.log" | tail -12 ;;
    tests_decode) run 150 pytest_decode python3 -m pytest -n 8 -q -p no:cacheprovider -p no:benchmark tests/gpu/test_lib_gpu.py \
                    tests/gpu/test_histogram_vec_gpu.py tests/examples/test_decode.py
                  grep -E "FAILED|ERROR|passed|failed" "$OUT/pytest_decode.log" | tail -12 ;;
    slots)  # the attention's chunk slots per KV head (attention.SLOTS) at context 4096, 0.6b and 4b
      for sl in 32 64; do export SIMTSAFE_DECODE_SLOTS=$sl
        run 130 decode06_c4096_slots$sl python3 benchmarks/decode.py --configs 0.6b --contexts 4096 --skip-anchor --tokens 32 --repeats 3
        grep -E "simtsafe graph|attention|combine" "$OUT/decode06_c4096_slots$sl.log" | head -4; done
      export SIMTSAFE_DECODE_SLOTS=32
      run 170 decode4b_c4096_slots32 python3 benchmarks/decode.py --configs 4b --contexts 0,4096 --skip-anchor --tokens 32 --repeats 3
      grep -E "simtsafe graph|attention|combine" "$OUT/decode4b_c4096_slots32.log"; unset SIMTSAFE_DECODE_SLOTS ;;
    attn)  # the decode at context 4096 (and 4b at 0), the attention's default schedule
      run 110 decode06_c4096 python3 benchmarks/decode.py --configs 0.6b --contexts 4096 --skip-anchor --tokens 32 --repeats 3
      grep -E "simtsafe graph|attention|combine" "$OUT/decode06_c4096.log" | head -4
      run 170 decode4b_c0_c4096 python3 benchmarks/decode.py --configs 4b --contexts 0,4096 --skip-anchor --tokens 32 --repeats 3
      grep -E "simtsafe graph|attention|combine" "$OUT/decode4b_c0_c4096.log" ;;
    latency) run 120 launch_latency python3 benchmarks/launch_latency.py --launches 5000 --rounds 3; grep "^|" "$OUT/launch_latency.log" | cut -c1-110 ;;
    gemv) run 120 decode_gemv python3 benchmarks/decode_gemv.py; grep "^|" "$OUT/decode_gemv.log" | cut -c1-100 ;;
    gemv_runs)  # the GEMVs' runs in flight (gemv.RUNS) against their register bound
      for rb in 2:3 4:3; do r=${rb%:*}; b=${rb#*:}
        export SIMTSAFE_DECODE_RUNS=$r; run 200 decode_gemv_runs${r}_bps$b python3 benchmarks/decode_gemv.py --blocks-per-sm $b --splits 1,2,4
        grep "^|" "$OUT/decode_gemv_runs${r}_bps$b.log" | cut -c1-100; done; unset SIMTSAFE_DECODE_RUNS ;;
    decode06) run 130 decode06 python3 benchmarks/decode.py --configs 0.6b --contexts 0,4096 --skip-anchor --tokens 32 --repeats 3
              grep -E "simtsafe graph|us each" "$OUT/decode06.log" ;;
    decode4b) run 170 decode4b python3 benchmarks/decode.py --configs 4b --contexts 0 --skip-anchor --tokens 32 --repeats 3
              grep -E "simtsafe graph|us each" "$OUT/decode4b.log" ;;
    gemm_current) run 300 gemm_bf16_current python3 benchmarks/gemm_bf16.py --current-only --reps 10; tail -16 "$OUT/gemm_bf16_current.log" ;;
    wgmma) run 300 gemm_bf16_wgmma python3 benchmarks/gemm_bf16.py --current-only --wgmma --reps 10; tail -16 "$OUT/gemm_bf16_wgmma.log" ;;
    wgsweep) run 200 wgmma_sweep python3 scripts/wgmma_sweep.py; grep "^|" "$OUT/wgmma_sweep.log" | cut -c1-100 ;;
    ptxv)  # PTX variants of the wgmma example: .alt/ptxv where carried, else made here
      dir=.alt/ptxv; [ -d "$dir" ] || { dir=/tmp/ptxv; python3 scripts/ptx_variants.py --make "$dir" >"$OUT/ptx_make.log" 2>&1; }
      run 200 ptx_variants python3 scripts/ptx_variants.py "$dir/raw.ptx:197632" \
        $(for f in "$dir"/safe*.ptx; do echo "$f:204800"; done); grep -E "^\||wgmma" "$OUT/ptx_variants.log" | cut -c1-120 ;;
    gemm) run 480 gemm_bf16 python3 benchmarks/gemm_bf16.py; tail -16 "$OUT/gemm_bf16.log" ;;
    sgemm) run 260 sgemm_variants python3 benchmarks/sgemm_variants.py --n 4096 --reps 10; tail -24 "$OUT/sgemm_variants.log" ;;
    irregular) run 60 irregular python3 benchmarks/irregular.py --parts compaction --reps 20; grep "^|" "$OUT/irregular.log" ;;
    hash) run 150 irregular_hash python3 benchmarks/irregular.py --parts hash,tsdf --reps 20; grep "^|" "$OUT/irregular_hash.log" ;;
    primitives) run 330 primitives python3 benchmarks/primitives.py; tail -16 "$OUT/primitives.log" ;;
    scan) run 200 primitives_scan python3 benchmarks/primitives.py --parts scan; grep -E "^\| scan" "$OUT/primitives_scan.log" ;;
    ncu)  # Nsight Compute on the 4b step's small kernels and GEMVs, where the image has it
      { command -v ncu nsys; nvidia-smi -q | grep -iE "product name|clocks" | head -4; } >"$OUT/tools.log" 2>&1; cat "$OUT/tools.log"
      if command -v ncu >/dev/null; then
        run 400 ncu_decode4b ncu -k 'regex:attention|qk_rope|gemv_norm|gemv_residual' --launch-skip 60 --launch-count 8 \
          --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats \
          python3 benchmarks/decode.py --configs 4b --contexts 0 --skip-anchor --tokens 4 --repeats 1 --ref-steps 0
        grep -E "attention|qk_rope|gemv_|Duration|Memory Throughput|Achieved Occupancy|Stall|Warp Cycles Per Issued" "$OUT/ncu_decode4b.log" | head -120
      fi ;;
    ncu_wgmma)  # Nsight Compute on the wgmma GEMM example, safe then raw (one launch each at 8192^3)
      if command -v ncu >/dev/null; then
        for which in safe raw; do
          run 200 ncu_wgmma_$which ncu -k regex:gemm_bf16 --launch-skip 2 --launch-count 1 --section SpeedOfLight \
            --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
            --section WarpStateStats --section SchedulerStats --section InstructionStats \
            python3 scripts/wgmma_ncu_target.py $which
          grep -vE "^==PROF==|Warning" "$OUT/ncu_wgmma_$which.log" | grep -E "Duration|Throughput|Executed Ipc|Issue Slots|Registers|Warp Cycles Per Issued|Stall|Instructions|Eligible|Active Warps|No Eligible|L1|Bank|Achieved" | head -40
        done
      fi ;;
    ncu_hist)  # Nsight Compute on the histogram example and its raw twin, uniform and skewed bytes
      if command -v ncu >/dev/null; then
        for which in safe raw; do for kind in uniform skewed; do
          run 120 ncu_hist_${which}_$kind ncu -k regex:histogram --launch-skip 2 --launch-count 1 \
            --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
            --section WarpStateStats --section SchedulerStats --section InstructionStats --section Occupancy \
            python3 scripts/hist_ncu_target.py $which $kind
          grep -vE "^==PROF==|Warning" "$OUT/ncu_hist_${which}_$kind.log" | grep -E "Duration|Throughput|Executed Ipc|Issue Slots|Warp Cycles Per Issued|Stall|Bank|Shared|Eligible|Achieved Occupancy|Instructions" | head -30
        done; done
      fi ;;
    ncu_gemm)  # Nsight Compute on the bf16 GEMM example (one launch at 8192^3): where its warps stall
      if command -v ncu >/dev/null; then
        run 420 ncu_gemm ncu -k regex:gemm_bf16 --launch-skip 2 --launch-count 1 --section SpeedOfLight \
          --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
          --section WarpStateStats --section SchedulerStats --section InstructionStats --section SourceCounters \
          python3 benchmarks/gemm_bf16.py --current-only --reps 1
        grep -vE "^==PROF==|Warning" "$OUT/ncu_gemm.log" | tail -150
      fi ;;
    attn_warps)  # the attention's warps per block, 4b at context 0 (the in-graph profile)
      for aw in 4 8; do export SIMTSAFE_DECODE_ATTN_WARPS=$aw
        run 170 decode4b_attn_warps$aw python3 benchmarks/decode.py --configs 4b --contexts 0 --skip-anchor --tokens 32 --repeats 3
        grep -E "simtsafe graph|attention|qk_rope" "$OUT/decode4b_attn_warps$aw.log"; done; unset SIMTSAFE_DECODE_ATTN_WARPS ;;
    decode4b_oldvec)  # the 4b step with the previous vec lowering (benchmarks/_vec_main.txt, untracked)
      cp simtsafe/lowering/_vec.py /tmp/vec_new.py && cp benchmarks/_vec_main.txt simtsafe/lowering/_vec.py
      run 170 decode4b_oldvec python3 benchmarks/decode.py --configs 4b --contexts 0 --skip-anchor --tokens 32 --repeats 3
      cp /tmp/vec_new.py simtsafe/lowering/_vec.py; grep -E "simtsafe graph|qkv|o_proj|gate_up|down" "$OUT/decode4b_oldvec.log" ;;
    fused)  # branch fused15's package (.alt/decode_fused: q/k norm + RoPE in the attention, KV append in o_proj; 4 and 8 attention warps) against this tree's, 4b at 0
      # make it first: mkdir -p .alt/decode_fused && git archive fused15 examples/decode | tar x -C .alt/decode_fused --strip-components=2
      cp -r examples/decode /tmp/decode_this
      for v in fused:4 this:4 fused:8; do t=${v%:*}; aw=${v#*:}; export SIMTSAFE_DECODE_ATTN_WARPS=$aw
        rm -rf examples/decode; if [ "$t" = fused ]; then cp -r .alt/decode_fused examples/decode; else cp -r /tmp/decode_this examples/decode; fi
        run 150 decode4b_${t}$aw python3 benchmarks/decode.py --configs 4b --contexts 0 --skip-anchor --tokens 32 --repeats 3
        grep -E "simtsafe graph|attention|qk_rope|o_proj" "$OUT/decode4b_${t}$aw.log"; done
      rm -rf examples/decode; cp -r /tmp/decode_this examples/decode; unset SIMTSAFE_DECODE_ATTN_WARPS ;;
    oldnew)  # the 4b step and the sum with .alt/old/simtsafe (NVVM given Numba's text: git archive c6922c8 simtsafe) and this tree's (the wrapping form)
      # the pair of one benchmark first, so that a call cut short still brings back a pair
      for t in old new; do P=$PYTHONPATH; [ "$t" = old ] && P=$PWD/.alt/old:$PYTHONPATH
        PYTHONPATH=$P run 170 decode4b_$t python3 benchmarks/decode.py --configs 4b --contexts 0 --skip-anchor --tokens 32 --repeats 3
        grep -E "simtsafe graph|us each" "$OUT/decode4b_$t.log"; done
      for t in old new; do P=$PYTHONPATH; [ "$t" = old ] && P=$PWD/.alt/old:$PYTHONPATH
        PYTHONPATH=$P run 120 primitives_sum_$t python3 benchmarks/primitives.py --parts sum
        grep -E "^\| sum" "$OUT/primitives_sum_$t.log"; done ;;
    atomics) run 90 shared_atomic_probe python3 benchmarks/shared_atomic_probe.py; grep "^|" "$OUT/shared_atomic_probe.log" ;;
    pdl) run 90 pdl_probe python3 benchmarks/pdl_probe.py; grep -E "^\||copy|chain" "$OUT/pdl_probe.log" ;;
    histogram) run 200 primitives_histogram python3 benchmarks/primitives.py --parts histogram; grep -E "^\| histogram" "$OUT/primitives_histogram.log" ;;
    decode06_4096)  # the anchor writes the 0.6b checkpoint at its first (only) context
      run 280 decode06_c4096 python3 benchmarks/decode.py --configs 0.6b --contexts 4096 --anchor .anchors/decode_anchor.py --tokens 64 --repeats 3 \
        --anchor-args "--variants eager,cuda_graph,compile --compile-modes reduce-overhead --compile-timeout 140 --deadline 240"
      grep -E "^\| 0.6b" "$OUT/decode06_c4096.log" ;;
    decode4b_4096) run 200 decode4b_c4096 python3 benchmarks/decode.py --configs 4b --contexts 4096 --skip-anchor --tokens 32 --repeats 3
      grep -E "simtsafe graph|us each" "$OUT/decode4b_c4096.log" ;;
    decode06_anchor) run 280 decode06_anchor python3 benchmarks/decode.py --configs 0.6b --contexts 0 --anchor .anchors/decode_anchor.py --tokens 64 --repeats 3 \
                       --anchor-args "--variants eager,cuda_graph,compile --compile-modes reduce-overhead --compile-timeout 140 --deadline 240"
                     grep -E "^\| 0.6b" "$OUT/decode06_anchor.log" ;;
  esac
done
