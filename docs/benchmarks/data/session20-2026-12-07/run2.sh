#!/bin/bash
# Session 20, call 2: the base backward benches again (bench_bwd.py, 3 rounds as session 18's call 6), sm_90
# against cuDNN and sm_80 against FA2, three configurations, 2k and 8k, on whatever card came.
# Run as bash run2.sh carrying build/kernels/sm80 and build/kernels/sm90.
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
T0=$SECONDS; LIM=${LIM:-560}
bench() {  # kernel lib seconds
  local left=$((LIM - (SECONDS - T0) - 5)); [ $left -lt 60 ] && return
  [ $3 -lt $left ] && left=$3
  timeout $left python3 tools/gpu/bench_bwd.py --kernel $1 --lib $2 --rounds 3 --json $OUT/bench_$1.json > $OUT/bench_$1.log 2>&1
  echo bench $1 rc=$? t=$((SECONDS - T0)); grep '"config"' $OUT/bench_$1.log | cut -c1-220
}
bench sm90 build/kernels/sm90/libcuir_flash_bwd_sm90.so 280
bench sm80 build/kernels/sm80/libcuir_flash_bwd_sm80.so 260
