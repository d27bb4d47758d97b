#!/bin/bash
# Session 11, device call 4: B (masks without spills, 722b466) against A (81d2bb6), interleaved, CuIR alone, every
# staged mask on both kernels; then B's issue bench (FlexAttention, and sm_80's dense builds).
export PYTHONPATH=python
cd .dev/s11 && tar xJf stageAB.tar.xz && cd ../..
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
BB=tools/gpu/bench_block_sparse.py
echo "== A/B"; timeout 170 python3 $BB --run .dev/s11/B --ab .dev/s11/A --kernels sm90,sm80 --rounds 3 --json $OUT/ab.json > $OUT/ab.log 2>&1; echo rc=$?; grep -E "^\|" $OUT/ab.log
echo "== B sm80 bench"; timeout 190 python3 $BB --run .dev/s11/B --kernels sm80 --no-check --names documents,global_window --json $OUT/B80.json > $OUT/B80.log 2>&1; echo rc=$?; grep -E "^\| sm" $OUT/B80.log
echo "== B sm90 bench"; timeout 190 python3 $BB --run .dev/s11/B --kernels sm90 --no-check --names documents,global_window --json $OUT/B90.json > $OUT/B90.log 2>&1; echo rc=$?; grep -E "^\| sm" $OUT/B90.log
