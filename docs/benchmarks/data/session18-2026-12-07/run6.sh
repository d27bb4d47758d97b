#!/bin/bash
# Session 18, call 4: (a) the sm_80 backward with its dQ conversion staged through shared memory (built here as
# build/kernels/sm80): check_bwd.py --quick, compute-sanitizer memcheck and racecheck on its smoke driver, the
# per-kernel breakdown at llama3.1-405b 8k causal; (b) bench_bwd.py with its rotating rounds (session 18) on both
# kernels, every configuration, cuDNN and FA2 in the same process. Run as LIM=420 bash run6.sh, carrying
# build/kernels/sm80 and build/kernels/sm90; logs in $OUT/all6.tgz, key lines on stdout.
# (bench_bwd.py then timed each side per call with timing.median_ms, a synchronize after each call, so that the
# host's time per call counted: replaced within the session by the do_bench timing of run8.sh.)
T0=$SECONDS; LIM=${LIM:-420}
left() { echo $((LIM - (SECONDS - T0))); }
K90=build/kernels/sm90 K80=build/kernels/sm80
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
timeout 120 python3 tools/gpu/check_bwd.py --kernel sm80 --lib $K80/libcuir_flash_bwd_sm80.so --quick > $OUT/check_sm80.log 2>&1
echo check sm80 rc=$? t=$((SECONDS - T0)); tail -1 $OUT/check_sm80.log
sanitize() {  # tool smoke
  timeout 100 compute-sanitizer --tool $1 --error-exitcode 9 $2 > $OUT/$1_sm80.log 2>&1
  echo $1 rc=$? t=$((SECONDS - T0)); tail -1 $OUT/$1_sm80.log
}
sanitize memcheck $K80/flash_bwd_sm80_smoke
sanitize racecheck $K80/flash_bwd_sm80_smoke
timeout 60 python3 tools/gpu/profile_bwd.py --breakdown --launches 2 --kernel sm80 --config llama3.1-405b --N 8192 --causal --who cuir 2>&1 | grep -v -i warn | cut -c1-150
bench() {  # tag kernel configs
  [ $(left) -lt 40 ] && return
  timeout $(( $(left) - 10 )) python3 tools/gpu/bench_bwd.py --kernel $2 --lib build/kernels/$2/libcuir_flash_bwd_$2.so \
    --configs $3 --json $OUT/b_$1.json > $OUT/b_$1.log 2>&1
  echo bench $1 rc=$? t=$((SECONDS - T0))
  grep '^{' $OUT/b_$1.log | sed 's/"config": //; s/, "B": [0-9]*//; s/"N": //; s/"causal": //' | cut -c1-170
}
bench sm90 sm90 llama2-7b,qwen2.5-72b,llama3.1-405b
bench sm80 sm80 llama2-7b,qwen2.5-72b,llama3.1-405b
cd $OUT && tar czf all6.tgz *.log *.json 2>/dev/null && rm -f *.log *.json
