#!/bin/bash
# Runs on the GPU machine, from the repository root, with the kernels build dir carried over (built here with
# clang; default build-sm90/kernels, override with K=...). STEPS picks what to run; logs and results go to $OUT.
#   info      GPU name, driver, clocks
#   smoke     the sm_90 smoke driver under a 60 s timeout (a deadlock ends the whole run here)
#   sass      cuobjdump SASS of the sm_90a cubin: HGMMA / UTMALDG / local-memory instruction counts
#   check     tools/gpu/check_flash_fwd.py --kernel sm90 (correctness vs float64, argument checks, repeats)
#   variants  check --quick of every library in $K/sm90-variants (tuning builds, see build_sm90_variants.sh)
#   sanitize  compute-sanitizer memcheck, racecheck, synccheck, initcheck on the smoke driver
#   bench     tools/gpu/bench_flash_fwd.py --kernel sm90 $BENCH_ARGS, with the variants as extra columns
# Other knobs: SANITIZERS (default: memcheck racecheck synccheck initcheck), SANITIZE_TIMEOUT (s, each),
# BENCH_TIMEOUT (s), NO_VARIANTS=1 (ignore $K/sm90-variants).
set -u
OUT=${OUT:-/tmp/cuir_out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
K=${K:-build-sm90/kernels}
export CUIR_FLASH_FWD_SM90_LIB=$PWD/$K/sm90/libcuir_flash_fwd_sm90.so
export CUIR_FLASH_FWD_SM80_LIB=$PWD/$K/sm80/libcuir_flash_fwd_sm80.so
SMOKE=$K/sm90/flash_fwd_sm90_smoke
STEPS=${STEPS:-"info smoke sass check variants sanitize bench"}
SANITIZERS=${SANITIZERS:-"memcheck racecheck synccheck initcheck"}
variants=$([ -n "${NO_VARIANTS:-}" ] || ls $K/sm90-variants/libcuir_flash_fwd_sm90_*.so 2>/dev/null || true)
status=0
for step in $STEPS; do
  echo "===== $step ($(date -u +%H:%M:%S)) ====="
  case $step in
    info)
      nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
      python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
      ;;
    smoke)
      timeout 60 "$SMOKE"
      rc=$?
      echo "smoke: exit code $rc"
      if [ $rc = 124 ]; then echo "smoke timed out (deadlock?): stopping"; exit 3; fi
      [ $rc = 0 ] || status=1
      ;;
    sass)
      cuobjdump -sass "$K/sm90/flash_fwd.sm_90a.cubin" > "$OUT/sass_sm90.txt" || status=1
      echo "HGMMA: $(grep -c HGMMA "$OUT/sass_sm90.txt")  UTMALDG: $(grep -c UTMALDG "$OUT/sass_sm90.txt")" \
           " SYNCS: $(grep -c SYNCS "$OUT/sass_sm90.txt")  local memory (LDL/STL): $(grep -c 'LDL\|STL' "$OUT/sass_sm90.txt")"
      grep -o 'HGMMA\.[^ ]*' "$OUT/sass_sm90.txt" | sort | uniq -c | head -20
      gzip -f "$OUT/sass_sm90.txt"
      ;;
    check)
      timeout 150 python3 tools/gpu/check_flash_fwd.py --kernel sm90 --json "$OUT/check.json" 2>&1 | tail -n 60
      [ "${PIPESTATUS[0]}" = 0 ] || status=1
      ;;
    variants)
      for lib in $variants; do
        echo "--- $lib"
        timeout 60 python3 tools/gpu/check_flash_fwd.py --kernel sm90 --lib "$lib" --quick 2>&1 | grep -v "^  " | tail -n 8
        [ "${PIPESTATUS[0]}" = 0 ] || status=1
      done
      ;;
    sanitize)
      for tool in $SANITIZERS; do
        timeout ${SANITIZE_TIMEOUT:-120} compute-sanitizer --tool $tool --error-exitcode 9 "$SMOKE" > "$OUT/sanitize.tmp" 2>&1
        rc=$?
        { echo "--- compute-sanitizer --tool $tool: exit code $rc"; cat "$OUT/sanitize.tmp"; } >> "$OUT/sanitize.log"
        echo "--- compute-sanitizer --tool $tool: exit code $rc: $(tail -n 1 "$OUT/sanitize.tmp")"
        rm -f "$OUT/sanitize.tmp"
        [ $rc = 0 ] || status=1
      done
      ;;
    bench)
      extra=""
      for lib in $variants; do n=$(basename "$lib" .so); extra="$extra --extra-lib ${n#libcuir_flash_fwd_sm90_}=$lib"; done
      timeout ${BENCH_TIMEOUT:-420} python3 tools/gpu/bench_flash_fwd.py --kernel sm90 ${BENCH_ARGS:-} $extra --json "$OUT/bench.json" --md "$OUT/bench.md" 2>&1
      [ $? = 0 ] || status=1
      ;;
  esac
done
echo "run_sm90_device.sh: status $status"
exit $status
