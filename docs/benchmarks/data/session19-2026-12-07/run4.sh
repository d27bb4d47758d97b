#!/bin/bash
# Session 19, the short form of run3.sh for the device time left: check_bwd --quick of libbwd80_desc_rot.so, then
# ncu (one launch at ncu's locked clocks) of the main kernel of HEAD, desc_rot and desc at llama3.1-405b 8k causal.
# Run as bash run4.sh carrying build/kernels/sm80 and .dev/s19.
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
T0=$SECONDS; X=.dev/s19
timeout 60 python3 tools/gpu/check_bwd.py --kernel sm80 --lib $X/libbwd80_desc_rot.so --quick > $OUT/check_desc_rot.log 2>&1
echo check desc_rot rc=$? $(tail -n 1 $OUT/check_desc_rot.log)
SEC="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats"
for t in desc_rot head desc; do
  lib=$X/libbwd80_$t.so; [ $t = head ] && lib=build/kernels/sm80/libcuir_flash_bwd_sm80.so
  timeout 45 ncu -k regex:flash_bwd_sm80_kernel --launch-count 1 $SEC python3 tools/gpu/profile_bwd.py --kernel sm80 \
    --lib $lib --config llama3.1-405b --N 8192 --causal --who cuir --launches 1 > $OUT/ncu_$t.txt 2>&1
  echo ncu $t rc=$? t=$((SECONDS - T0)); grep -E "Elapsed Cycles|SM Frequency|L2 Hit Rate|DRAM Throughput|ms:" $OUT/ncu_$t.txt | cut -c1-100
done
