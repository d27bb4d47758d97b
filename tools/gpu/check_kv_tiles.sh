#!/bin/bash
# The expert kernels after the block-iteration point (cuir/kv_tiles.cuh) went in: their dense schedule must behave
# and run as before. Runs on the GPU machine, from the repository root, with the kernels build carried over
# (built here with clang: `ninja -C build cuir_flash_fwd_sm80 cuir_flash_fwd_sm90`); builds nothing.
#   K       kernels build dir (default build/kernels)
#   BASE_K  optional: a kernels build dir of the commit before the change (e.g. build-base/kernels, from
#           `cmake --build <main build> --target cuir_flash_fwd_sm80 cuir_flash_fwd_sm90` and copied there);
#           the bench step then times it beside K as column "base"
# STEPS picks what to run (default: info smoke check sanitize, and bench when BASE_K is set); logs go to $OUT.
#   info      GPU name, driver
#   smoke     both smoke drivers under a 60 s timeout (a deadlock of the sm_90 pipeline ends the run)
#   check     tools/gpu/check_flash_fwd.py --kernel sm80 and --kernel sm90 (float64 references, ragged, GQA,
#             causal, argument checks)
#   sanitize  compute-sanitizer $SANITIZERS (default memcheck racecheck) on both smoke drivers
#   sass      with BASE_K: SASS instruction counts and opcode histograms of every cubin, base against K
#   bench     tools/gpu/bench_flash_fwd.py of each kernel at N = 2k and 8k, with BASE_K's library as "base"
# Example (lead): run(command="STEPS='smoke check sanitize' bash tools/gpu/check_kv_tiles.sh", carry=["build/kernels"])
set -u
OUT=${OUT:-/tmp/cuir_out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
K=${K:-build/kernels}
BASE_K=${BASE_K:-}
export CUIR_FLASH_FWD_SM80_LIB=$PWD/$K/sm80/libcuir_flash_fwd_sm80.so
export CUIR_FLASH_FWD_SM90_LIB=$PWD/$K/sm90/libcuir_flash_fwd_sm90.so
STEPS=${STEPS:-"info smoke check sanitize$([ -n "$BASE_K" ] && echo " sass bench")"}
SANITIZERS=${SANITIZERS:-"memcheck racecheck"}
status=0
for step in $STEPS; do
  echo "===== $step ($(date -u +%H:%M:%S)) ====="
  case $step in
    info)
      nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
      ;;
    smoke)
      for kernel in sm80 sm90; do
        timeout 60 "$K/$kernel/flash_fwd_${kernel}_smoke" > "$OUT/smoke_$kernel.log" 2>&1
        rc=$?
        echo "smoke $kernel: exit code $rc: $(tail -n 1 "$OUT/smoke_$kernel.log")"
        if [ $rc = 124 ]; then echo "smoke $kernel timed out (deadlock?): stopping"; exit 3; fi
        [ $rc = 0 ] || status=1
      done
      ;;
    check)
      for kernel in sm80 sm90; do
        timeout 240 python3 tools/gpu/check_flash_fwd.py --kernel $kernel --json "$OUT/check_$kernel.json" \
          > "$OUT/check_$kernel.log" 2>&1
        rc=$?
        echo "check $kernel: exit code $rc"
        tail -n 8 "$OUT/check_$kernel.log"
        [ $rc = 0 ] || status=1
      done
      ;;
    sanitize)
      for kernel in sm80 sm90; do
        for tool in $SANITIZERS; do
          timeout ${SANITIZE_TIMEOUT:-180} compute-sanitizer --tool $tool --error-exitcode 9 \
            "$K/$kernel/flash_fwd_${kernel}_smoke" > "$OUT/sanitize.tmp" 2>&1
          rc=$?
          { echo "--- $kernel $tool: exit code $rc"; cat "$OUT/sanitize.tmp"; } >> "$OUT/sanitize.log"
          echo "--- $kernel $tool: exit code $rc: $(tail -n 1 "$OUT/sanitize.tmp")"
          rm -f "$OUT/sanitize.tmp"
          [ $rc = 0 ] || status=1
        done
      done
      ;;
    sass)
      if [ -z "$BASE_K" ]; then echo "sass: needs BASE_K"; status=1; continue; fi
      for cubin in sm80/flash_fwd.sm_80.cubin sm80/flash_fwd.sm_90.cubin sm90/flash_fwd.sm_90a.cubin; do
        name=$(basename "$cubin" .cubin)
        for side in base new; do
          dir=$([ $side = base ] && echo "$BASE_K" || echo "$K")
          cuobjdump -sass "$dir/$cubin" | grep -E '^\s+/\*[0-9a-f]{4,}\*/' |
            sed -E 's#^\s+/\*[0-9a-f]+\*/\s+(@!?U?P[0-9T]+\s+)?([A-Z0-9_.]+).*#\2#' | sort | uniq -c \
            > "$OUT/sass_ops_${side}_$name.txt"
        done
        count() { awk '{s += $1} END {print s}' "$OUT/sass_ops_$1_$name.txt"; }
        same=$(cmp -s "$OUT/sass_ops_base_$name.txt" "$OUT/sass_ops_new_$name.txt" && echo identical || echo differs)
        echo "$cubin: SASS instructions base $(count base), new $(count new); opcode histogram $same"
        diff "$OUT/sass_ops_base_$name.txt" "$OUT/sass_ops_new_$name.txt" | head -n 20
      done
      ;;
    bench)
      for kernel in sm80 sm90; do
        base=()
        [ -n "$BASE_K" ] && base=(--extra-lib "base=$PWD/$BASE_K/$kernel/libcuir_flash_fwd_$kernel.so")
        timeout ${BENCH_TIMEOUT:-280} python3 tools/gpu/bench_flash_fwd.py --kernel $kernel --n 2048 8192 --no-flex \
          --no-sm80 "${base[@]}" --json "$OUT/bench_$kernel.json" --md "$OUT/bench_$kernel.md" 2>&1 | tail -n 16
        [ "${PIPESTATUS[0]}" = 0 ] || status=1
      done
      ;;
    *)
      echo "unknown step '$step'"
      status=1
      ;;
  esac
done
echo "check_kv_tiles.sh: status $status"
exit $status
