#!/bin/bash
# Ran in session 18 (2026-12-07) on the same warm H100 as `LIM=280 bash docs/benchmarks/data/session18-2026-12-07/run4.sh`;
# logs and JSON in call2/.
# Prepared in session 17, not run (no device time left): the sm_80 backward's step orders at 8k causal GQA, each
# against the kernel before, alternating. The libraries: kernels/sm80/flash_bwd.cu with sm80-order-variants.patch
# applied, built with the CMake build's clang++ line (add -I kernels/sm80 and the macros) into .dev/s80x/:
#   libbwd80_pairs_outer.so        -DHEADS_OUTER=1 -DNO_PAIRS=0 -DPAIR_MHA=0  pairs, the heads outer, ascending
#   libbwd80_inner_desc.so         -DHEADS_OUTER=0 -DNO_PAIRS=1 -DPAIR_MHA=0  no pairs, heads inner, unmasked descending
#   libbwd80_inner_desc_kvslow.so  the same with -DKV_SLOWEST_ALL=1           ... and the KV block slowest
# and .dev/s80p/libbwd80_pair0.so (-DPAIR_MHA=0 without the other macros: the measured pairs, heads inner),
# .dev/s80p/libbwd80_base.so (the kernel of HEAD). Run as LIM=300 bash run4.sh, carrying .dev/s80x and
# .dev/s80p.
T0=$SECONDS; LIM=${LIM:-300}; X=.dev/s80x P=.dev/s80p; GQA=qwen2.5-72b,llama3.1-405b
b() { [ $((SECONDS - T0)) -gt $((LIM - 30)) ] && return; timeout 40 python3 tools/gpu/bench_bwd.py --kernel sm80 --lib $2 --configs $GQA --N 8192 --json $OUT/b_$1.json > $OUT/b_$1.log 2>&1; echo bench $1 rc=$? t=$((SECONDS - T0)); grep '"causal": true' $OUT/b_$1.log | sed 's/"config": //; s/, "B": [0-9]*//' | cut -c1-150; }
for lib in $X/libbwd80_pairs_outer.so $X/libbwd80_inner_desc.so $X/libbwd80_inner_desc_kvslow.so; do
  timeout 60 python3 tools/gpu/check_bwd.py --kernel sm80 --lib $lib --quick > $OUT/check_$(basename $lib .so).log 2>&1
  echo check $lib rc=$?; tail -1 $OUT/check_$(basename $lib .so).log
done
for r in 1 2; do
  b base_r$r $P/libbwd80_base.so; b pairs_outer_r$r $X/libbwd80_pairs_outer.so; b inner_desc_r$r $X/libbwd80_inner_desc.so
  b inner_desc_kvslow_r$r $X/libbwd80_inner_desc_kvslow.so; b pair0_r$r $P/libbwd80_pair0.so
done
cd $OUT && tar czf all4.tgz *.log *.json && rm -f *.log *.json
