#!/bin/bash
# Session 17, prepared for a third call and not run (too little device time left to start a machine): does the sm_90 backward's paired code cost MHA? llama2-7b (MHA, never paired) with the
# committed kernel (build/kernels/sm90) and the kernel before the pairs (be1f87d, .dev/s90b/libbwd90_prepairs.so,
# built here with the CMake build's command line), alternating, three rounds. Run as bash run3.sh.
T0=$SECONDS
b() { [ $((SECONDS - T0)) -gt 120 ] && return; timeout 40 python3 tools/gpu/bench_bwd.py --kernel sm90 --lib $2 --configs llama2-7b --json $OUT/b_$1.json > $OUT/b_$1.log 2>&1; echo bench $1 rc=$? t=$((SECONDS - T0)); grep '^{' $OUT/b_$1.log | sed 's/"config": //; s/, "B": [0-9]*//; s/"N": //; s/"causal": //' | cut -c1-150; }
nvidia-smi --query-gpu=name --format=csv,noheader
for r in 1 2 3; do b head_r$r build/kernels/sm90/libcuir_flash_bwd_sm90.so; b prepairs_r$r .dev/s90b/libbwd90_prepairs.so; done
cd $OUT && tar czf all3.tgz *.log *.json && rm -f *.log *.json
