#!/bin/bash
# A/B of two builds of one kernel and its variants, timed in the same run on the GPU machine.
#   here:   cp -r build/variant-libs[-sm90] build/variant-libs[-sm90]-A    # the old build, before the change
#           (make the change, rebuild: tools/gpu/build_variants.sh + stage_variants.sh, KERNEL=sm90 for sm90)
#   device: bash tools/gpu/ab_variants.sh sm80|sm90    # carry build/variant-libs[-sm90] and its -A copy
# The new build (B) is checked first (base kernel and variants); then both are benchmarked twice, A then B, at
# N = 2k and 8k (eager at 2k for B's first round), and a table of B/A per row is printed. JSON in $OUT.
set -u
K=${1:?usage: ab_variants.sh sm80|sm90}
S=$([ "$K" = sm80 ] || echo "-$K")
KU=$(echo "$K" | tr a-z A-Z)
OUT=${OUT:-/tmp/cuir_out}
export PYTHONUNBUFFERED=1 CUIR_KERNEL=$K
libs() { echo "build/variant-libs$S$([ "$1" = A ] && echo -A)"; }
B=$(libs B)
python3 tools/gpu/check_flash_fwd.py --kernel "$K" --lib "$B/base/libcuir_flash_fwd_$K.so" 2>&1 | tail -1
env CUIR_VARIANTS_DIR="$B" "CUIR_FLASH_FWD_${KU}_LIB=$B/base/libcuir_flash_fwd_$K.so" \
  python3 tools/gpu/check_variants.py check 2>&1 | tail -1
for round in 1 2; do
  for v in A B; do
    L=$(libs $v)
    eager=$([ $v = B ] && [ $round = 1 ] && echo 2048)
    env CUIR_VARIANTS_DIR="$L" "CUIR_FLASH_FWD_${KU}_LIB=$L/base/libcuir_flash_fwd_$K.so" \
      python3 tools/gpu/check_variants.py bench --n 2048 8192 --flex-n --eager-n $eager \
      --json "$OUT/$K-$v-$round.json" > "$OUT/$K-$v-$round.log" 2>&1 || tail -5 "$OUT/$K-$v-$round.log"
  done
done
python3 - "$K" "$OUT" <<'PY'
import json, sys
k, out = sys.argv[1:]
for r in (1, 2):
    A, B = (json.load(open(f"{out}/{k}-{v}-{r}.json")) for v in "AB")
    print(f"round {r}: TF/s A, B, B/A; vs base causal A, B; B vs eager")
    A = {(row["config"], row["N"], row["variant"]): row for row in A}  # A may hold fewer variants than B
    for b in B:
        a = A.get((b["config"], b["N"], b["variant"]))
        if a is None:
            continue
        print(f"{a['config']:14} {a['N']:5} {a['variant']:17} {a['tflops']:6.1f} {b['tflops']:6.1f} "
              f"{b['tflops'] / a['tflops']:5.3f}  {a.get('vs_base_causal', 0):5.3f} {b.get('vs_base_causal', 0):5.3f} "
              f"{b.get('vs_eager', '')}")
PY
