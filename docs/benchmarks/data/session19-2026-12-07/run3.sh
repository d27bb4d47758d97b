#!/bin/bash
# Session 19, call 3: the sm_80 backward with the heads inner, the unmasked query blocks from the last down and the
# group's heads rotated by the KV block (so that the blocks of a KV head in flight read the same query blocks at once,
# each on another head: L2 reuse of Q, dO and the dQ accumulator without every block adding into one dQ tile at once),
# against HEAD (a056088) at llama3.1-405b 8k causal. Libraries: kernels/sm80/flash_bwd.cu with
# sm80-heads-inner-rotated.diff, built with the CMake build's clang++ line into .dev/s19/ (-DROT=1 -DDESC=1:
# libbwd80_desc_rot.so; -DROT=0 -DDESC=1: libbwd80_desc.so, no rotation). check_bwd --quick, ncu (L2 hit rate,
# cycles) of both, then bench_bwd.py at 405b 8k, HEAD and desc_rot alternating.
# Run as LIM=420 bash run3.sh carrying build/kernels/sm80 and .dev/s19.
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
T0=$SECONDS; LIM=${LIM:-420}; X=.dev/s19; H=build/kernels/sm80/libcuir_flash_bwd_sm80.so
timeout 60 python3 tools/gpu/check_bwd.py --kernel sm80 --lib $X/libbwd80_desc_rot.so --quick > $OUT/check_desc_rot.log 2>&1
echo check desc_rot rc=$? $(tail -n 1 $OUT/check_desc_rot.log)
SEC="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats"
for t in desc_rot desc; do
  timeout 60 ncu -k regex:flash_bwd_sm80_kernel --launch-count 1 $SEC python3 tools/gpu/profile_bwd.py --kernel sm80 \
    --lib $X/libbwd80_$t.so --config llama3.1-405b --N 8192 --causal --who cuir --launches 1 > $OUT/ncu_$t.txt 2>&1
  echo ncu $t rc=$? t=$((SECONDS - T0)); grep -E "Elapsed Cycles|SM Frequency|L2 Hit Rate|ms:" $OUT/ncu_$t.txt | cut -c1-100
done
b() { [ $((SECONDS - T0)) -gt $((LIM - 100)) ] && return; timeout 95 python3 tools/gpu/bench_bwd.py --kernel sm80 --lib $2 --configs llama3.1-405b --N 8192 --json $OUT/b_$1.json > $OUT/b_$1.log 2>&1; echo bench $1 rc=$? t=$((SECONDS - T0)); grep '"causal": true' $OUT/b_$1.log | sed 's/"config": //; s/, "B": [0-9]*//; s/"N": //; s/"causal": //' | cut -c1-150; }
for r in 1 2; do b head_r$r $H; b desc_rot_r$r $X/libbwd80_desc_rot.so; done
cd $OUT && tar czf all3.tgz *.log *.json *.txt 2>/dev/null; rm -f *.log *.json *.txt
