#!/bin/bash
# On the GPU machine, from the repository root, with build/variant-libs carried
# (tools/gpu/stage_variants.sh makes it here). STEPS: check sanitize bench.
# KERNEL=sm90: the variants of the sm_90 kernel, from build/variant-libs-sm90.
set -u
OUT=${OUT:-/tmp/cuir_out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
KERNEL=${KERNEL:-sm80}
libs=$PWD/build/variant-libs$([ "$KERNEL" = sm80 ] || echo "-$KERNEL")
export CUIR_FLASH_FWD_SM80_LIB=$libs/base/libcuir_flash_fwd_sm80.so
export CUIR_FLASH_FWD_SM90_LIB=$libs/base/libcuir_flash_fwd_sm90.so
export CUIR_VARIANTS_DIR=$libs
export CUIR_KERNEL=$KERNEL
status=0
for step in ${STEPS:-check sanitize bench}; do
  echo "===== $step ====="
  case $step in
    check)
      python3 tools/gpu/check_variants.py check --json "$OUT/check.json" 2>&1 | tee "$OUT/check.log"
      [ "${PIPESTATUS[0]}" = 0 ] || status=1
      if [ -d "$libs/alibi_traced" ]; then
        python3 tools/gpu/check_traced.py "$libs/alibi_traced" 2>&1 | tee -a "$OUT/check.log"
        [ "${PIPESTATUS[0]}" = 0 ] || status=1
      fi ;;
    sanitize)
      for d in "$libs"/*/; do
        case "$(basename "$d")" in base | alibi_traced) continue ;; esac
        for tool in ${SANITIZERS:-memcheck}; do
          timeout 120 compute-sanitizer --tool "$tool" --error-exitcode 9 python3 tools/gpu/sanitize_variant.py "$d" \
            > "$OUT/sanitize.tmp" 2>&1
          rc=$?
          echo "$(basename "$d") $tool: exit $rc, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize.tmp" | tail -1)"
          cat "$OUT/sanitize.tmp" >> "$OUT/sanitize.log"
          [ $rc = 0 ] || status=1
        done
      done ;;
    bench)
      python3 tools/gpu/check_variants.py bench ${BENCH_ARGS:-} --json "$OUT/bench.json" 2>&1 | tee "$OUT/bench.log"
      [ "${PIPESTATUS[0]}" = 0 ] || status=1 ;;
  esac
done
echo "run_variants_device.sh: status $status"
exit $status
