#!/usr/bin/env bash
# Builds every variant kernel of the GPU validation and benchmark with the
# pipeline (lift from the cache, transfer, split, lower through NVPTX), into
# build/variants/<name>/ (carried to the GPU machine; compiled here, where
# clang and MLIR are). KERNEL=sm90 builds them on the sm_90 kernel instead,
# into build/variants-sm90/. BWD=1 also lowers the variant's backward pass
# (kernels/$KERNEL/flash_bwd.cu) into <name>/<name>_bwd.cu and its library.
# Usage: [KERNEL=sm90] [BWD=1] tools/gpu/build_variants.sh [name ...]
set -euo pipefail
cd "$(dirname "$0")/../.."
OPT=${CUIR_OPT:-build/bin/cuir-opt}
KERNEL=${KERNEL:-sm80}
OUTDIR=build/variants$([ "$KERNEL" = sm80 ] || echo "-$KERNEL")
ARCH=$([ "$KERNEL" = sm80 ] && echo sm_90 || echo sm_90a)
declare -A SPEC=(
  [causal]="causal"
  [prefixlm]="prefixlm"
  [softcap_causal]="softcap,causal"
  [alibi_causal]="alibi,causal"
  [window]="window"
  [prefixlm_softcap]="prefixlm,softcap"
  [sigmoid_causal]="sigmoid,causal"
  [composite]="prefixlm,softcap,sigmoid"
  [global_window]="global-window"
  [document]="document"
)
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(causal prefixlm softcap_causal alibi_causal window prefixlm_softcap sigmoid_causal composite global_window document)
for n in "${names[@]}"; do
  echo "== $n: ${SPEC[$n]}"
  rm -rf "$OUTDIR/$n"
  "$OPT" "kernels/$KERNEL/flash_fwd.cu" --lift --transfer="${SPEC[$n]}" --cuir-split-full-partial \
    --lower -o "$OUTDIR/$n/$n.cu"
  grep -h "registers\|spill" "$OUTDIR/$n/$n.$ARCH.ptxas.log" | sort | uniq -c | sort -rn | head -3
  if [ "${BWD:-0}" = 1 ]; then
    "$OPT" "kernels/$KERNEL/flash_bwd.cu" --lift --transfer="${SPEC[$n]}" --cuir-split-full-partial --lower -o "$OUTDIR/$n/${n}_bwd.cu"
    grep -h "registers\|spill" "$OUTDIR/$n/${n}_bwd.$ARCH.ptxas.log" | sort | uniq -c | sort -rn | head -3
  fi
done
# The Python path: cuir.compile on a traced score_mod/mask_mod.
if [ $# -eq 0 ]; then
  echo "== alibi_traced: cuir.compile(score_mod=..., mask_mod=..., kernel=\"$KERNEL\")"
  rm -rf "$OUTDIR/alibi_traced"
  CUIR_OPT="$OPT" PYTHONPATH=python /usr/bin/python3 test/Integration/Python/Inputs/build_traced.py "$OUTDIR/alibi_traced" "$KERNEL"
fi
