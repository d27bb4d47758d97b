#!/bin/bash
# Session 13, device call 1: (1) the staged gathers issued one step ahead (experiments/prefetch_next) against as
# lowered; (2) the sm_80 evaluated-mask path made unreachable (experiments/mask_fallback) against as lowered;
# (3) half of the catalogue against FlexAttention at the bench shape, sm_90.
export PYTHONPATH=python
cd .dev/s13 && tar xJf cat90.tar.xz && tar xJf fb.tar.xz && cd ../..
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
timeout 170 python3 tools/gpu/ab_catalogue.py --kernel sm90 asis=.dev/s13/cat90 next=.dev/s13/next --rounds 5 --json $OUT/next.json bias_tensor random_mask > $OUT/next.log 2>&1; echo next rc=$?; grep -vE "^\s" $OUT/next.log | grep -v Traceback | tail -8
timeout 120 python3 tools/gpu/ab_catalogue.py --kernel sm80 asis=.dev/s13/ab/fb-asis nofallback=.dev/s13/ab/fb-nofb --rounds 5 --json $OUT/fallback.json document prefix_document > $OUT/fallback.log 2>&1; echo fallback rc=$?; grep -vE "^\s" $OUT/fallback.log | grep -v Traceback | tail -6
timeout 270 python3 tools/gpu/check_catalogue.py --run .dev/s13/cat90 --kernels sm90 --rounds 3 --json $OUT/cat1.json --md $OUT/cat1.md document document_causal prefix_document dilated global_window block_diagonal fixed_sparse bias_tensor window_per_head sliding_window > $OUT/cat1.log 2>&1; echo cat1 rc=$?; tail -20 $OUT/cat1.log
