#!/bin/bash
# Session 15, device call 2: the whole catalogue on the sm_90 kernel against FlexAttention (bench shape, timing
# only), as far as the time allows.
export PYTHONPATH=python
D=.dev/s15
T0=$SECONDS
left() { echo $((580 - (SECONDS - T0))); }
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
(cd $D && tar xJf cat.tar.xz)
timeout $(left) python3 tools/gpu/check_catalogue.py --run $D/cat --kernels sm90 --rounds 2 --json $OUT/cat.json --md $OUT/cat.md > $OUT/cat.log 2>&1
echo cat rc=$? t=$((SECONDS - T0)); grep -E "^\|" $OUT/cat.md | head -40; tail -3 $OUT/cat.log
