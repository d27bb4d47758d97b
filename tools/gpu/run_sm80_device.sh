#!/bin/bash
# Runs on the GPU machine, from the repository root, with build/kernels carried over (built here with clang).
# STEPS picks what to run (default: all); logs and results go to $OUT.
#   info      GPU name, driver, clocks
#   sass      cuobjdump SASS of the sm_90 cubin (spill/scheduling forensics)
#   check     tools/gpu/check_flash_fwd.py --kernel sm80 --time (correctness vs float64 + argument checks + timings)
#   sanitize  compute-sanitizer memcheck, racecheck, synccheck, initcheck on build/kernels/sm80/flash_fwd_sm80_smoke
#   bench     tools/gpu/bench_flash_fwd.py --kernel sm80 $BENCH_ARGS (peers: SDPA flash, SDPA cuDNN, FlexAttention)
set -u
OUT=${OUT:-/tmp/cuir_out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
K=build/kernels/sm80
STEPS=${STEPS:-"info sass check sanitize bench"}
status=0
for step in $STEPS; do
  echo "===== $step ====="
  case $step in
    info)
      nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
      python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
      ;;
    sass)
      cuobjdump -sass "$K/flash_fwd.sm_90.cubin" > "$OUT/sass_sm90.txt" || status=1
      echo "local-memory instructions in the sm_90 SASS: $(grep -c 'STL\|LDL' "$OUT/sass_sm90.txt")"
      ;;
    check)
      python3 tools/gpu/check_flash_fwd.py --kernel sm80 --time --json "$OUT/check.json" 2>&1 | tee "$OUT/check.log"
      [ "${PIPESTATUS[0]}" = 0 ] || status=1
      ;;
    sanitize)
      for tool in memcheck racecheck synccheck initcheck; do
        echo "--- compute-sanitizer --tool $tool"
        timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 "$K/flash_fwd_sm80_smoke" > "$OUT/sanitize.tmp" 2>&1
        rc=$?
        { echo "--- compute-sanitizer --tool $tool: exit code $rc"; cat "$OUT/sanitize.tmp"; } >> "$OUT/sanitize.log"
        rm -f "$OUT/sanitize.tmp"
        tail -n 2 "$OUT/sanitize.log"
        echo "exit code $rc"
        [ $rc = 0 ] || status=1
      done
      ;;
    bench)
      python3 tools/gpu/bench_flash_fwd.py --kernel sm80 ${BENCH_ARGS:-} --json "$OUT/bench.json" --md "$OUT/bench.md" 2>&1 | tee "$OUT/bench.log"
      [ "${PIPESTATUS[0]}" = 0 ] || status=1
      ;;
  esac
done
echo "run_sm80_device.sh: status $status"
exit $status
