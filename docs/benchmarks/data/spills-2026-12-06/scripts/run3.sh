#!/bin/bash
# Session 11, device call 3: the lowering's masks without spills (B, commit 722b466) against the lowering before
# (A, 81d2bb6): B's checks against float64, then the issue bench's masks and the five at 8k, B and A in turn.
export PYTHONPATH=python
cd .dev/s11 && tar xJf stageAB.tar.xz && cd ../..
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
BB=tools/gpu/bench_block_sparse.py
echo "== B checks"; timeout 150 python3 $BB --run .dev/s11/B --kernels sm90,sm80 --no-bench --json $OUT/B-check.json > $OUT/B-check.log 2>&1; echo rc=$?; grep -ciE "\bok\b" $OUT/B-check.log; grep -iE "fail" $OUT/B-check.log | head
for r in B A; do echo "== $r documents, global_window"; timeout 110 python3 $BB --run .dev/s11/$r --kernels sm90,sm80 --no-check --names documents,global_window --json $OUT/$r-dg.json > $OUT/$r-dg.log 2>&1; echo rc=$?; grep -E "^\| sm" $OUT/$r-dg.log; done
for r in B A; do echo "== $r five at 8k"; timeout 90 python3 $BB --run .dev/s11/$r --kernels sm90,sm80 --no-check --n 8192 --names causal,prefixlm,softcap_causal,alibi_causal,window --json $OUT/$r-five.json > $OUT/$r-five.log 2>&1; echo rc=$?; grep -E "^\| sm" $OUT/$r-five.log; done
