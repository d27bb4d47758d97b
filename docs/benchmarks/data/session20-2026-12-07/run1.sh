#!/bin/bash
# Session 20, call 1: session 19's run4.sh (check_bwd --quick of the sm_80 backward with the heads inner, the
# unmasked blocks descending and the group's heads rotated by the KV block; ncu of its main kernel, HEAD's and the
# unrotated one at llama3.1-405b 8k causal), then the base backward benches on whatever card came
# (bench_bwd.py: sm_90 against cuDNN with the training step, sm_80 against FA2; three configurations, 2k and 8k).
# Run as bash run1.sh carrying build/kernels/sm80, build/kernels/sm90 and .dev/s19.
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
T0=$SECONDS; LIM=${LIM:-580}; X=.dev/s19
timeout 60 python3 tools/gpu/check_bwd.py --kernel sm80 --lib $X/libbwd80_desc_rot.so --quick > $OUT/check_desc_rot.log 2>&1
echo check desc_rot rc=$? $(tail -n 1 $OUT/check_desc_rot.log)
SEC="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats"
for t in desc_rot head desc; do
  lib=$X/libbwd80_$t.so; [ $t = head ] && lib=build/kernels/sm80/libcuir_flash_bwd_sm80.so
  timeout 45 ncu -k regex:flash_bwd_sm80_kernel --launch-count 1 $SEC python3 tools/gpu/profile_bwd.py --kernel sm80 \
    --lib $lib --config llama3.1-405b --N 8192 --causal --who cuir --launches 1 > $OUT/ncu_$t.txt 2>&1
  echo ncu $t rc=$? t=$((SECONDS - T0)); grep -E "Elapsed Cycles|L2 Hit Rate|DRAM Throughput" $OUT/ncu_$t.txt | cut -c1-100
done
bench() {  # kernel lib seconds
  local left=$((LIM - (SECONDS - T0) - 5)); [ $left -lt 60 ] && return
  [ $3 -lt $left ] && left=$3
  timeout $left python3 tools/gpu/bench_bwd.py --kernel $1 --lib $2 --rounds 2 --json $OUT/bench_$1.json > $OUT/bench_$1.log 2>&1
  echo bench $1 rc=$? t=$((SECONDS - T0)); grep '"config"' $OUT/bench_$1.log | cut -c1-220
}
bench sm90 build/kernels/sm90/libcuir_flash_bwd_sm90.so 240
bench sm80 build/kernels/sm80/libcuir_flash_bwd_sm80.so 240
