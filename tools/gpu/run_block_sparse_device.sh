#!/usr/bin/env bash
# On the GPU machine: the block-sparsity checks, sanitizers and bench of tools/gpu/bench_block_sparse.py on the
# staged libraries (carried as build/sparse.tar.xz and build/sparse80.tar.xz), results under $OUT.
#   STEPS="check sanitize bench" N="2048 8192" CONFIGS=llama2-7b,qwen2.5-72b,llama3.1-405b
set -uo pipefail
cd "$(dirname "$0")/../.."
STEPS=${STEPS:-"check sanitize bench"}
OUT=${OUT:-/tmp/out}
export PYTHONPATH=python
for t in build/sparse.tar.xz build/sparse80.tar.xz; do [ -f "$t" ] && tar xJf "$t"; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for k in sm90 sm80; do
  dir=build/sparse; [ "$k" = sm80 ] && dir=build/sparse80
  [ -d "$dir" ] || continue
  if [[ " $STEPS " == *" check "* ]]; then
    python3 tools/gpu/bench_block_sparse.py --run "$dir" --kernels "$k" --no-bench --json "$OUT/check-$k.json" 2>&1 | grep -v "^{" | tail -40
  fi
  if [[ " $STEPS " == *" sanitize "* ]]; then
    for tool in memcheck racecheck; do
      compute-sanitizer --tool "$tool" --print-limit 5 python3 tools/gpu/bench_block_sparse.py --run "$dir" \
        --kernels "$k" --no-bench --names documents,global_window 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|check .*(ok|FAIL)" | tail -6
    done
  fi
  if [[ " $STEPS " == *" bench "* ]]; then
    python3 tools/gpu/bench_block_sparse.py --run "$dir" --kernels "$k" --no-check --n ${N:-2048 8192} \
      --configs "${CONFIGS:-llama2-7b,qwen2.5-72b,llama3.1-405b}" --json "$OUT/bench-$k.json" 2>&1 | grep -v "^{" | tail -70
  fi
done
