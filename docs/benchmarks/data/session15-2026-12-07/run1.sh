#!/bin/bash
# Session 15, device call 1: the centred parameter gradients checked on the GPU (both backward kernels);
# ncu of the sm_90 backward and cuDNN's at llama3.1-405b 8k causal; issue 16's bench of packed documents and
# global tokens + window (sm_90 against FlexAttention, sm_80 against its own dense build) as far as time allows.
export PYTHONPATH=python
D=.dev/s15
T0=$SECONDS
left() { echo $((575 - (SECONDS - T0))); }
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version,power.limit --format=csv,noheader
(cd $D && tar xJf cb.tar.xz && tar xJf bbold.tar.xz)
timeout 170 python3 tools/gpu/check_catalogue_bwd.py --run $D/cb90 --kernel sm90 --no-bench --json $OUT/cb90.json > $OUT/cb90.log 2>&1
echo cb90 rc=$? t=$((SECONDS - T0)); grep -vE "^PASS" $OUT/cb90.log | tail -12; grep -E "alibi |d_alibi" $OUT/cb90.log | head -4
timeout 90 python3 tools/gpu/check_catalogue_bwd.py --run $D/cb80 --kernel sm80 --no-bench --json $OUT/cb80.json > $OUT/cb80.log 2>&1
echo cb80 rc=$? t=$((SECONDS - T0)); grep -vE "^PASS" $OUT/cb80.log | tail -8
SEC="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats"
timeout 75 ncu -k regex:flash_bwd --launch-count 3 $SEC python3 tools/gpu/profile_bwd.py --kernel sm90 --config llama3.1-405b --N 8192 --causal --who cuir --launches 1 > $OUT/ncu_cuir.txt 2>&1
echo ncu cuir rc=$? t=$((SECONDS - T0))
timeout 75 ncu -k regex:'cudnn|sdpa|fmha|bprop|dgrad|sm90' --launch-count 6 $SEC python3 tools/gpu/profile_bwd.py --kernel sm90 --config llama3.1-405b --N 8192 --causal --who cudnn --launches 1 > $OUT/ncu_cudnn.txt 2>&1
echo ncu cudnn rc=$? t=$((SECONDS - T0))
for w in cuir cudnn; do
  echo "== $w"; grep -E "^  [a-zA-Z_].*\(|Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|L2 Hit Rate|Registers Per Thread|Achieved Occupancy|Issued Ipc Active|Warp Cycles Per Issued|No Eligible|Executed Ipc Active" $OUT/ncu_$w.txt | cut -c1-150 | head -60
done
timeout $(left) python3 tools/gpu/bench_block_sparse.py --run $D/bbold --kernels sm80,sm90 --no-check --names global_window,documents --json $OUT/bb16.json > $OUT/bb16.log 2>&1
echo bb16 rc=$? t=$((SECONDS - T0)); grep -E "^\|" $OUT/bb16.log; grep -E "^\{" $OUT/bb16.log | cut -c1-400 | tail -30
