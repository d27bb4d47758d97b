#!/bin/bash
# Session 14, device call 1: the sm_90 backward with a GQA group's heads split over two thread blocks under
# causal masks (split2) against the committed kernel (base): checks, then bench alternating; the five of DESIGN
# section 8 at 8k (staged from HEAD, the held origin in) against FlexAttention; the clock probe of bias_tensor.
export PYTHONPATH=python
D=.dev/s14
T0=$SECONDS
left() { echo $((570 - (SECONDS - T0))); }
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
timeout 150 python3 tools/gpu/check_bwd.py --kernel sm90 --lib $D/libbwd90_split2.so --quick > $OUT/check_split2.log 2>&1; echo check rc=$?; tail -2 $OUT/check_split2.log
for r in 1 2; do
  for v in split2 base; do
    timeout 90 python3 tools/gpu/bench_bwd.py --kernel sm90 --lib $D/libbwd90_$v.so --configs qwen2.5-72b,llama3.1-405b --json $OUT/bench_${v}_$r.json > $OUT/bench_${v}_$r.log 2>&1; echo bench $v $r rc=$? t=$((SECONDS - T0))
  done
done
grep -h "causal" $OUT/bench_*_1.log | head -20
cd $D && tar xJf five.tar.xz && tar xJf cat.tar.xz && cd ../..
timeout $(left) python3 tools/gpu/bench_block_sparse.py --run $D/five --kernels sm90 --no-check --n 8192 --json $OUT/five8k.json > $OUT/five8k.log 2>&1; echo five rc=$? t=$((SECONDS - T0)); grep -E "^\|" $OUT/five8k.log | tail -24
timeout $(left) python3 tools/gpu/clock_probe.py --kernel sm90 held=$D/cat bias_tensor random_mask --seconds 4 --json $OUT/clock_probe.json > $OUT/clock_probe.log 2>&1; echo probe rc=$? t=$((SECONDS - T0)); tail -8 $OUT/clock_probe.log
timeout $(left) compute-sanitizer --tool memcheck python3 tools/gpu/check_bwd.py --kernel sm90 --lib $D/libbwd90_split2.so --sanitize > $OUT/memcheck_split2.log 2>&1; echo memcheck rc=$? t=$((SECONDS - T0)); tail -2 $OUT/memcheck_split2.log
