#!/bin/bash
# Session 19, call 1: session 18's run11-not-run.sh as prepared (two step orders of the sm_80 backward at 8k causal
# GQA against HEAD a056088, after session 18's ncu put its gap on L2 misses). Libraries built from kernels/sm80 with
# the CMake build's clang++ line into .dev/s18x/ (session 18):
#   libbwd80_kvfast.so  HEAD with kv_block_slowest() false: the grid KV block fastest under causal GQA too
#   libbwd80_pairs.so   session 17's pairs with the heads inner on HEAD's kernel (../session18-2026-12-07/sm80-pairs-on-7c4aa06.patch)
# check_bwd.py --quick on each, then bench_bwd.py (rotating rounds) at 8k, the libraries in turn, two rounds.
# Then, time permitting, ncu (one launch, at ncu's locked clocks) of the main kernel of session 18's
# libbwd80_inner_desc_kvslow.so and libbwd80_inner_desc.so (.dev/s80x: heads inner, unmasked steps descending, the
# KV block slowest or fastest), which lost 4% and 13% in session 18's call 2 although their blocks in flight walk
# the same query tiles at once: their L2 hit rates and stalls.
# Run as LIM=540 bash run1.sh carrying build/kernels/sm80, .dev/s18x and .dev/s80x.
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
T0=$SECONDS; LIM=${LIM:-540}; X=.dev/s18x; H=build/kernels/sm80/libcuir_flash_bwd_sm80.so
for lib in $X/libbwd80_kvfast.so $X/libbwd80_pairs.so; do
  timeout 60 python3 tools/gpu/check_bwd.py --kernel sm80 --lib $lib --quick > $OUT/check_$(basename $lib .so).log 2>&1
  echo check $(basename $lib) rc=$? $(tail -n 1 $OUT/check_$(basename $lib .so).log)
done
b() { [ $((SECONDS - T0)) -gt $((LIM - 75)) ] && return; timeout 90 python3 tools/gpu/bench_bwd.py --kernel sm80 --lib $2 --configs qwen2.5-72b,llama3.1-405b --N 8192 --json $OUT/b_$1.json > $OUT/b_$1.log 2>&1; echo bench $1 rc=$? t=$((SECONDS - T0)); grep '"causal": true' $OUT/b_$1.log | sed 's/"config": //; s/, "B": [0-9]*//; s/"N": //; s/"causal": //' | cut -c1-150; }
for r in 1 2; do b head_r$r $H; b kvfast_r$r $X/libbwd80_kvfast.so; b pairs_r$r $X/libbwd80_pairs.so; done
SEC="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats"
ncu_one() {  # tag lib
  [ $((SECONDS - T0)) -gt $((LIM - 80)) ] && return
  timeout 75 ncu -k regex:flash_bwd_sm80_kernel --launch-count 1 $SEC python3 tools/gpu/profile_bwd.py --kernel sm80 \
    --lib $2 --config llama3.1-405b --N 8192 --causal --who cuir --launches 1 > $OUT/ncu_$1.txt 2>&1
  echo ncu $1 rc=$? t=$((SECONDS - T0))
  grep -E "Elapsed Cycles|SM Frequency|DRAM Throughput|L2 Hit Rate|Warp Cycles Per Issued|No Eligible" $OUT/ncu_$1.txt | cut -c1-120 | head -8
}
ncu_one inner_desc_kvslow .dev/s80x/libbwd80_inner_desc_kvslow.so
ncu_one inner_desc .dev/s80x/libbwd80_inner_desc.so
cd $OUT && tar czf all1.tgz *.log *.json *.txt 2>/dev/null; rm -f *.log *.json *.txt
