#!/bin/bash
# Session 18, prepared for call 9 and not run (no machine could be started; the device time was then spent): two step orders of the sm_80 backward at 8k causal GQA against HEAD (7c4aa06's kernel,
# build/kernels/sm80), after call 8's ncu put its gap on L2 misses. Libraries built here from kernels/sm80 with the
# CMake build's clang++ line into .dev/s18x/:
#   libbwd80_kvfast.so  HEAD with kv_block_slowest() false: the grid KV block fastest under causal GQA too, so
#                       that the blocks in flight belong to one or two KV heads
#   libbwd80_pairs.so   session 17's sm80-pairs-heads-inner.patch (its kernel part) with HEAD's dQ conversion
# check_bwd.py --quick on each, then bench_bwd.py (rotating rounds) at 8k, the libraries in turn, two rounds.
# Run as LIM=300 bash run11-not-run.sh carrying build/kernels/sm80 and .dev/s18x.
T0=$SECONDS; LIM=${LIM:-300}; X=.dev/s18x; H=build/kernels/sm80/libcuir_flash_bwd_sm80.so
for lib in $X/libbwd80_kvfast.so $X/libbwd80_pairs.so; do
  timeout 60 python3 tools/gpu/check_bwd.py --kernel sm80 --lib $lib --quick > $OUT/check_$(basename $lib .so).log 2>&1
  echo check $(basename $lib) rc=$? $(tail -n 1 $OUT/check_$(basename $lib .so).log)
done
b() { [ $((SECONDS - T0)) -gt $((LIM - 45)) ] && return; timeout 60 python3 tools/gpu/bench_bwd.py --kernel sm80 --lib $2 --configs qwen2.5-72b,llama3.1-405b --N 8192 --json $OUT/b_$1.json > $OUT/b_$1.log 2>&1; echo bench $1 rc=$? t=$((SECONDS - T0)); grep '"causal": true' $OUT/b_$1.log | sed 's/"config": //; s/, "B": [0-9]*//; s/"N": //; s/"causal": //' | cut -c1-150; }
for r in 1 2; do b head_r$r $H; b kvfast_r$r $X/libbwd80_kvfast.so; b pairs_r$r $X/libbwd80_pairs.so; done
cd $OUT && tar czf all11.tgz *.log *.json && rm -f *.log *.json
