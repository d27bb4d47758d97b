#!/bin/bash
# Session 18, call 8: (a) every catalogue entry's backward on the sm_80 kernel (staged here with
# `check_catalogue_bwd.py --stage .dev/cbn80 --kernel sm80`, packed without sources as .dev/s18/cbn80.tar.xz);
# (b) the session's fuzz batch (w18_*) on the sm_90 kernels, forward and backward (`check_fuzz_variants.py fwd
# --stage .dev/fz18f --kernels sm90 w18_...`, `bwd --stage .dev/fz18b --kernel sm90 w18_...`, packed as
# .dev/s18/fz18.tar.xz); (c) ncu of the sm_80 backward's main kernel and FA2's at llama3.1-405b 8k causal, the one
# row below FA2. Run as LIM=420 bash run10.sh carrying the two archives and build/kernels/sm80; logs in $OUT.
T0=$SECONDS; LIM=${LIM:-420}
left() { echo $((LIM - (SECONDS - T0))); }
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
mkdir -p /tmp/stage && tar xJf .dev/s18/cbn80.tar.xz -C /tmp/stage && tar xJf .dev/s18/fz18.tar.xz -C /tmp/stage
timeout 200 python3 tools/gpu/check_catalogue_bwd.py --run /tmp/stage/cbn80 --kernel sm80 --no-bench \
  --json $OUT/cb80.json > $OUT/cb80.log 2>&1
echo catalogue sm80 rc=$? t=$((SECONDS - T0)); grep "FAIL\|rror\|runs," $OUT/cb80.log | grep -v -i warn | tail -8
timeout 100 python3 tools/gpu/check_fuzz_variants.py fwd --run /tmp/stage/fz18f --kernels sm90 --no-bench \
  --json $OUT/fz18f.json > $OUT/fz18f.log 2>&1
echo fuzz fwd rc=$? t=$((SECONDS - T0)); grep -i "FAIL\|rror\|checks\|passed" $OUT/fz18f.log | grep -v -i warn | tail -8
timeout 100 python3 tools/gpu/check_fuzz_variants.py bwd --run /tmp/stage/fz18b --kernel sm90 --no-bench \
  --json $OUT/fz18b.json > $OUT/fz18b.log 2>&1
echo fuzz bwd rc=$? t=$((SECONDS - T0)); grep "FAIL\|rror\|runs," $OUT/fz18b.log | grep -v -i warn | tail -8
SEC="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy"
ncu_one() {  # who regex
  [ $(left) -lt 80 ] && return
  timeout 75 ncu -k regex:"$2" --launch-count 1 $SEC python3 tools/gpu/profile_bwd.py --kernel sm80 \
    --config llama3.1-405b --N 8192 --causal --who $1 --launches 1 > $OUT/ncu_$1.txt 2>&1
  echo ncu $1 rc=$? t=$((SECONDS - T0))
  grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|L1/TEX Hit Rate|L2 Hit Rate|Achieved Occupancy|Issued Ipc Active|Warp Cycles Per Issued|No Eligible" $OUT/ncu_$1.txt | cut -c1-120 | head -14
}
ncu_one cuir flash_bwd_sm80_kernel
ncu_one fa2 flash_bwd_dq_dk_dv
