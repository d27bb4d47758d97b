#!/bin/bash
# Session 11, device call 10: the classification writes the bits of a row's first full tile where the row has no
# partial tiles (the sm_90 forward's first step reads them): global tokens + window and documents, forward and
# backward, at the shapes of check_variant_bwd.py (Nq 640 > Nkv 256 failed before); the issue bench's checks.
export PYTHONPATH=python
tar xJf .dev/s11/bwdlibs2.tar.xz && cd .dev/s11 && tar xJf stageC.tar.xz && cd ../..
nvidia-smi --query-gpu=name --format=csv,noheader
echo "== variants"; timeout 120 python3 tools/gpu/check_variant_bwd.py --libs build/variants-sm90 --names global_window,document --json $OUT/bwd.json > $OUT/bwd.log 2>&1; echo rc=$?; grep -E "FAIL|passed" $OUT/bwd.log
echo "== bench checks"; timeout 120 python3 tools/gpu/bench_block_sparse.py --run .dev/s11/C --kernels sm90,sm80 --no-bench --json $OUT/C-check.json > $OUT/C-check.log 2>&1; echo rc=$?; grep -c " ok" $OUT/C-check.log; grep -E "FAIL" $OUT/C-check.log | head -3
