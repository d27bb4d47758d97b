#!/bin/bash
# Session 11, device call 1: the leading query block of every row first across batches (new) against the
# order batch by batch (old), issue 16's bench masks on both kernels; checks on the new build first.
export PYTHONPATH=python
cd .dev/s11 && tar xJf stage.tar.xz && cd ../..
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
B=tools/gpu/bench_block_sparse.py
echo "== new, checks + bench"; timeout 230 python3 $B --run .dev/s11/new --kernels sm90,sm80 --json $OUT/new1.json > $OUT/new1.log 2>&1; echo rc=$?; grep -E "pass|fail|\| sm" $OUT/new1.log | tail -40
echo "== old, bench"; timeout 170 python3 $B --run .dev/s11/old --kernels sm90,sm80 --no-check --json $OUT/old1.json > $OUT/old1.log 2>&1; echo rc=$?; grep -E "\| sm" $OUT/old1.log | tail -30
echo "== new, bench again"; timeout 150 python3 $B --run .dev/s11/new --kernels sm90,sm80 --no-check --json $OUT/new2.json > $OUT/new2.log 2>&1; echo rc=$?; grep -E "\| sm" $OUT/new2.log | tail -30
