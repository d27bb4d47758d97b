#!/bin/bash
# Session 12, device call 4: every catalogue entry at the new "tall" check shape (B1 H6/1, Nq 640 > Nkv 256), both
# kernels, against float64; then global_window and document at that shape built with the block-mask
# classification from before c84b515 (the bits bug), which the tall check must fail.
export PYTHONPATH=python
cd .dev && tar xJf s12/tall-all.tar.xz && cd ..
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
CHK=tools/gpu/check_catalogue.py
echo "== tall checks, every entry"; timeout 200 python3 $CHK --run .dev/ab/cat-tall-all --kernels sm80,sm90 --no-bench --json $OUT/tall-all.json > $OUT/tall-all.log 2>&1; echo rc=$?; tail -1 $OUT/tall-all.log; grep -E "FAIL|error" $OUT/tall-all.log | head -8
echo "== tall checks, the classification before c84b515 (must fail)"; timeout 60 python3 $CHK --run .dev/ab/cat-tall-bug --kernels sm90 --no-bench --json $OUT/tall-bug.json > $OUT/tall-bug.log 2>&1; echo rc=$?; tail -1 $OUT/tall-bug.log; grep -vE "^\s" $OUT/tall-bug.log | head -6
