#!/bin/bash
# Session 13, device call 4: (1) the held origin's checks against float64 (sm_90 forward, 8 entries at the ragged,
# GQA and tall shapes; sm_90 backward of t5_bucket, relative_bias, bias_tensor); (2) the evaluated mask out of
# line: checks with and without bits, and the A/B against the lowering before on both kernels, with bits and
# (the out-of-line path itself) without.
export PYTHONPATH=python
cd .dev/s13 && for t in cat90 hold chk outofline; do tar xJf $t.tar.xz; done; cd ../..
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
timeout 120 python3 tools/gpu/check_catalogue.py --run .dev/s13/chk90 --kernels sm90 --no-bench --json $OUT/chk90.json > $OUT/chk90.log 2>&1; echo chk90 rc=$?; grep -E "runs|passed|failed|FAIL" $OUT/chk90.log | tail -3
timeout 150 python3 tools/gpu/check_catalogue_bwd.py --run .dev/s13/bwd90 --no-bench --json $OUT/bwd90.json > $OUT/bwd90.log 2>&1; echo bwd90 rc=$?; grep -E "runs|passed|failed|FAIL" $OUT/bwd90.log | tail -3
for K in sm80 sm90; do
  timeout 60 python3 tools/gpu/check_catalogue.py --run .dev/s13/oolchk --kernels $K --no-bench --json $OUT/oolchk-$K.json > $OUT/oolchk-$K.log 2>&1; echo oolchk $K rc=$?; grep -E "runs|FAIL" $OUT/oolchk-$K.log | tail -2
  CUIR_MASK_BITS=0 timeout 60 python3 tools/gpu/check_catalogue.py --run .dev/s13/oolchk --kernels $K --no-bench --json $OUT/oolchk-nobits-$K.json > $OUT/oolchk-nobits-$K.log 2>&1; echo oolchk nobits $K rc=$?; grep -E "runs|FAIL" $OUT/oolchk-nobits-$K.log | tail -2
done
timeout 100 python3 tools/gpu/ab_catalogue.py --kernel sm80 old=.dev/s13/old80 new=.dev/s13/ool --rounds 5 --json $OUT/ool80.json prefix_document document document_causal block_diagonal global_window > $OUT/ool80.log 2>&1; echo ool80 rc=$?; grep -vE "^\s" $OUT/ool80.log | grep -v Traceback | grep -v warning | tail -6
timeout 100 python3 tools/gpu/ab_catalogue.py --kernel sm90 old=.dev/s13/cat90 new=.dev/s13/ool --rounds 5 --json $OUT/ool90.json prefix_document document document_causal block_diagonal global_window > $OUT/ool90.log 2>&1; echo ool90 rc=$?; grep -vE "^\s" $OUT/ool90.log | grep -v Traceback | grep -v warning | tail -6
timeout 60 python3 tools/gpu/ab_catalogue.py --kernel sm80 old=.dev/s13/old80 new=.dev/s13/ool --no-bits old --no-bits new --rounds 3 --json $OUT/ool80-nobits.json prefix_document document > $OUT/ool80-nobits.log 2>&1; echo ool80 nobits rc=$?; grep -vE "^\s" $OUT/ool80-nobits.log | grep -v Traceback | grep -v warning | tail -3
