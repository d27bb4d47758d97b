#!/bin/bash
# Session 11, device call 2: ncu of the sm_80 kernel on global tokens + window (sparse and dense) and documents.
export PYTHONPATH=python
cd .dev/s11 && tar xJf stage.tar.xz && cd ../..
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
S="--section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section LaunchStats --section SchedulerStats --section ComputeWorkloadAnalysis"
for job in "global_window 0 llama2-7b 8192" "global_window 1 llama2-7b 8192" "global_window 0 qwen2.5-72b 8192" "documents 0 llama2-7b 8192"; do
  set -- $job
  tag=$1-$2-$3-$4
  echo "== $tag"
  timeout 120 ncu $S -k regex:flash_fwd_sm80 --launch-skip 3 --launch-count 1 -o $OUT/$tag python3 .dev/s11/prof.py .dev/s11/old sm80 $1 $2 $3 $4 > $OUT/$tag.log 2>&1; echo rc=$?
  ncu --import $OUT/$tag.ncu-rep --page details --print-units base > $OUT/$tag.txt 2>&1
  grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|L2 Hit Rate|Achieved Occupancy|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Theoretical Occupancy|Block Limit" $OUT/$tag.txt | head -20
done
