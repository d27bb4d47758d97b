#!/bin/bash
# Runs on the GPU machine, from the repository root, with build/kernels/sm80 carried over (built here with clang):
# the sm_80 backward kernel's checks and benchmark. STEPS picks what to run (default: all); logs go to $OUT.
#   check     tools/gpu/check_bwd.py --kernel sm80 (gradients vs float64 autograd, deterministic mode, argument checks)
#   sanitize  compute-sanitizer memcheck, racecheck, synccheck, initcheck on build/kernels/sm80/flash_bwd_sm80_smoke
#   bench     tools/gpu/bench_bwd.py --kernel sm80 (against SDPA cuDNN and flash (FA2) backward, same run)
set -u
OUT=${OUT:-/tmp/cuir_out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
K=build/kernels/sm80
STEPS=${STEPS:-"check sanitize bench"}
status=0
for step in $STEPS; do
  echo "===== $step ====="
  case $step in
    check)
      python3 tools/gpu/check_bwd.py --kernel sm80 --lib "$K/libcuir_flash_bwd_sm80.so" ${CHECK_ARGS:-} \
        --json "$OUT/check_bwd.json" 2>&1 | tee "$OUT/check_bwd.log" | tail -n 20
      [ "${PIPESTATUS[0]}" = 0 ] || status=1
      ;;
    sanitize)
      for tool in memcheck racecheck synccheck initcheck; do
        timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 "$K/flash_bwd_sm80_smoke" > "$OUT/sanitize.tmp" 2>&1
        rc=$?
        { echo "--- compute-sanitizer --tool $tool: exit code $rc"; cat "$OUT/sanitize.tmp"; } >> "$OUT/sanitize_bwd.log"
        echo "compute-sanitizer --tool $tool: $(tail -n 1 "$OUT/sanitize.tmp"), exit code $rc"
        rm -f "$OUT/sanitize.tmp"
        [ $rc = 0 ] || status=1
      done
      ;;
    bench)
      python3 tools/gpu/bench_bwd.py --kernel sm80 --lib "$K/libcuir_flash_bwd_sm80.so" ${BENCH_ARGS:-} \
        --json "$OUT/bench_bwd.json" --md "$OUT/bench_bwd.md" 2>&1 | tee "$OUT/bench_bwd.log"
      [ "${PIPESTATUS[0]}" = 0 ] || status=1
      ;;
  esac
done
echo "run_sm80_bwd_device.sh: status $status"
exit $status
