#!/bin/bash
# Session 18, call 5: bench_bwd.py timing every side back to back (`--back-to-back` since; loop_ms, the host's time per call hidden for all
# alike), in rotating rounds, on both kernels (build/kernels/sm80 with the staged dQ conversion, build/kernels/sm90),
# every configuration, cuDNN and FA2 in the same process. Run as LIM=400 bash run7.sh, carrying build/kernels/sm80
# and build/kernels/sm90; logs in $OUT/all7.tgz, key lines on stdout.
T0=$SECONDS; LIM=${LIM:-400}; BTB=1
left() { echo $((LIM - (SECONDS - T0))); }
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
bench() {  # tag kernel configs
  [ $(left) -lt 40 ] && return
  timeout $(( $(left) - 10 )) python3 tools/gpu/bench_bwd.py --kernel $2 --lib build/kernels/$2/libcuir_flash_bwd_$2.so \
    --configs $3 ${BTB:+--back-to-back} --json $OUT/b_$1.json > $OUT/b_$1.log 2>&1
  echo bench $1 rc=$? t=$((SECONDS - T0))
  grep '^{' $OUT/b_$1.log | sed 's/"config": //; s/, "B": [0-9]*//; s/"N": //; s/"causal": //' | cut -c1-170
}
bench sm90 sm90 llama2-7b,qwen2.5-72b,llama3.1-405b
bench sm80 sm80 llama2-7b,qwen2.5-72b,llama3.1-405b
cd $OUT && tar czf all7.tgz *.log *.json 2>/dev/null && rm -f *.log *.json
