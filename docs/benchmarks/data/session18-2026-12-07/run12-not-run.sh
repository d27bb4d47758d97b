#!/bin/bash
# Session 18, prepared and not run (too little device time was left to start a machine): the sm_90 backward of record (build/kernels/sm90 of HEAD)
# against cuDNN and FA2, every configuration, bench_bwd.py as committed, its rows printed as they come. Run as
# LIM=... bash run12-not-run.sh carrying build/kernels/sm90.
T0=$SECONDS; LIM=${LIM:-200}
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
timeout $((LIM - 5)) python3 tools/gpu/bench_bwd.py --kernel sm90 --lib build/kernels/sm90/libcuir_flash_bwd_sm90.so \
  --json $OUT/b_sm90.json 2>&1 | tee $OUT/b_sm90.log | grep --line-buffered '^{' | sed -u 's/"config": //; s/, "B": [0-9]*//; s/"N": //; s/"causal": //' | cut -c1-170
echo bench rc=${PIPESTATUS[0]} t=$((SECONDS - T0))
