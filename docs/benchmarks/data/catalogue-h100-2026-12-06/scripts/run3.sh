#!/bin/bash
# Session 13, device call 3: the scores helper's origin (row0, col0) held in the KV loop, against the lowering
# before (sm_90: .dev/s13/cat90; sm_80: .dev/s13/old80), interleaved, outputs compared; then the held build's
# checks against float64 are not here (bench shape only).
export PYTHONPATH=python
cd .dev/s13 && tar xJf cat90.tar.xz && tar xJf hold.tar.xz && cd ../..
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
timeout 330 python3 tools/gpu/ab_catalogue.py --kernel sm90 old=.dev/s13/cat90 held=.dev/s13/new90 --rounds 5 --json $OUT/hold90.json t5_bucket log_distance relative_bias alibi_sigmoid_document bias_tensor random_mask alibi_causal causal_score_mod bidirectional_window softcap > $OUT/hold90.log 2>&1; echo hold90 rc=$?; grep -vE "^\s" $OUT/hold90.log | grep -v Traceback | grep -v warning | tail -12
timeout 200 python3 tools/gpu/ab_catalogue.py --kernel sm80 old=.dev/s13/old80 held=.dev/s13/new80 --rounds 5 --json $OUT/hold80.json log_distance alibi block_diagonal relative_bias prefix_document global_window > $OUT/hold80.log 2>&1; echo hold80 rc=$?; grep -vE "^\s" $OUT/hold80.log | grep -v Traceback | grep -v warning | tail -8
