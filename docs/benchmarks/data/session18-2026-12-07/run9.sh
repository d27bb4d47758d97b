#!/bin/bash
# Session 18, call 7: every catalogue entry's backward on the sm_90 kernel (causal GQA tiles in pairs since session
# 16), against float64 autograd at ragged, GQA and tall shapes, bf16 and fp16 (check_catalogue_bwd.py --run).
# Staged here with `check_catalogue_bwd.py --stage .dev/cbn90 --kernel sm90` (84 kernels, 58 builds) and packed
# without sources as .dev/s18/cbn90.tar.xz, which the call carries. Run as bash run9.sh; logs in $OUT.
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
mkdir -p /tmp/stage && tar xJf .dev/s18/cbn90.tar.xz -C /tmp/stage
timeout 300 python3 tools/gpu/check_catalogue_bwd.py --run /tmp/stage/cbn90 --kernel sm90 --no-bench \
  --json $OUT/cb90.json > $OUT/cb90.log 2>&1
echo check rc=$? t=$((SECONDS - T0))
grep "FAIL\|rror\|runs," $OUT/cb90.log | grep -v -i warn | tail -20
