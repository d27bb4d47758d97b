#!/bin/bash
# Session 17, call 2 (the same warm H100, right after call 1): the sm_90 backward at the GQA configurations' 2k and
# again at 8k and llama2-7b 2k; the sm_80 backward before (libbwd80_base.so) and with the causal GQA pairs
# (build/kernels/sm80 of the working tree then), alternating, two more rounds at 8k. Run as bash run2.sh.
T0=$SECONDS; K90=build/kernels/sm90 K80=build/kernels/sm80 E=.dev/s80p; GQA=qwen2.5-72b,llama3.1-405b
b() { [ $((SECONDS - T0)) -gt 230 ] && return; timeout 60 python3 tools/gpu/bench_bwd.py --kernel $2 --lib $3 --configs $4 --N $5 --json $OUT/b_$1.json > $OUT/b_$1.log 2>&1; echo bench $1 rc=$? t=$((SECONDS - T0)); grep '^{' $OUT/b_$1.log | sed 's/"config": //; s/, "B": [0-9]*//; s/"N": //; s/"causal": //' | cut -c1-150; }
b sm90_g2 sm90 $K90/libcuir_flash_bwd_sm90.so $GQA 2048
b sm80_base_g8r2 sm80 $E/libbwd80_base.so $GQA 8192
b sm80_new_g8r2 sm80 $K80/libcuir_flash_bwd_sm80.so $GQA 8192
b sm80_base_g8r3 sm80 $E/libbwd80_base.so $GQA 8192
b sm80_new_g8r3 sm80 $K80/libcuir_flash_bwd_sm80.so $GQA 8192
b sm90_m2 sm90 $K90/libcuir_flash_bwd_sm90.so llama2-7b 2048
b sm90_g8r2 sm90 $K90/libcuir_flash_bwd_sm90.so $GQA 8192
cd $OUT && tar czf all2.tgz *.log *.json && rm -f *.log *.json
