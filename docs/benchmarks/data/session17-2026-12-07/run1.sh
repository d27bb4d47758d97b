#!/bin/bash
# Session 17, call 1. (a) The committed sm_90 backward (causal GQA tiles in pairs since d1a96a7; built here and
# carried as build/kernels): check_bwd.py --quick (gradients against float64 autograd), the benchmark against
# cuDNN and FA2 (the GQA configurations at 8k, llama2-7b at 2k and 8k; the rest in run2.sh), compute-sanitizer
# memcheck and racecheck on its smoke driver. (b) The sm_80 backward with causal GQA tiles in pairs and the GQA
# heads inner (the working tree's kernels/sm80/flash_bwd.cu then, now sm80-pairs-heads-inner.patch; built as
# build/kernels/sm80) against the kernel before (.dev/s80p/libbwd80_base.so, from HEAD), and the pairs for MHA
# too (.dev/s80p/exp.cu -DPAIR_MHA=1: libbwd80_pair1.so). Run as LIM=300 bash run1.sh (steps past LIM are
# skipped); logs in $OUT/all.tgz, key lines on stdout.
T0=$SECONDS
LIM=${LIM:-300}
left() { echo $((LIM - (SECONDS - T0))); }
K90=build/kernels/sm90 K80=build/kernels/sm80 E=.dev/s80p
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
check() {  # tag kernel lib [args]
  local tag=$1 k=$2 lib=$3; shift 3
  timeout 120 python3 tools/gpu/check_bwd.py --kernel $k --lib $lib "$@" > $OUT/check_$tag.log 2>&1
  echo check $tag rc=$? t=$((SECONDS - T0)); tail -1 $OUT/check_$tag.log
}
bench() {  # tag kernel lib configs [N...]
  [ $(left) -lt 60 ] && return
  local tag=$1 k=$2 lib=$3 cf=$4; shift 4
  timeout $(( $(left) < 150 ? $(left) - 10 : 140 )) python3 tools/gpu/bench_bwd.py --kernel $k --lib $lib --configs $cf \
    ${1:+--N $@} --json $OUT/b_$tag.json > $OUT/b_$tag.log 2>&1
  echo bench $tag rc=$? t=$((SECONDS - T0))
  grep '^{' $OUT/b_$tag.log | sed 's/"config": //; s/, "B": [0-9]*//' | cut -c1-170
}
GQA=qwen2.5-72b,llama3.1-405b
check sm80_new sm80 $K80/libcuir_flash_bwd_sm80.so --quick
check sm80_pair1 sm80 $E/libbwd80_pair1.so --quick
bench sm80_new_g8 sm80 $K80/libcuir_flash_bwd_sm80.so $GQA 8192
bench sm80_base_g8 sm80 $E/libbwd80_base.so $GQA 8192
check sm90 sm90 $K90/libcuir_flash_bwd_sm90.so --quick
bench sm90_g8 sm90 $K90/libcuir_flash_bwd_sm90.so $GQA 8192
sanitize() {  # tool tag smoke [lib]
  [ $(left) -gt 110 ] || return
  timeout 100 compute-sanitizer --tool $1 --error-exitcode 9 $3 $4 > $OUT/$1_$2.log 2>&1
  echo $1 $2 rc=$? t=$((SECONDS - T0)); tail -1 $OUT/$1_$2.log
}
sanitize racecheck smoke80_new $K80/flash_bwd_sm80_smoke
sanitize memcheck smoke90 $K90/flash_bwd_sm90_smoke
bench sm80_pair1_m sm80 $E/libbwd80_pair1.so llama2-7b
bench sm80_base_m sm80 $E/libbwd80_base.so llama2-7b
sanitize memcheck smoke80_new $K80/flash_bwd_sm80_smoke
sanitize racecheck smoke90 $K90/flash_bwd_sm90_smoke
bench sm90_m sm90 $K90/libcuir_flash_bwd_sm90.so llama2-7b
bench sm80_new_g2 sm80 $K80/libcuir_flash_bwd_sm80.so $GQA 2048
bench sm80_base_g2 sm80 $E/libbwd80_base.so $GQA 2048
cd $OUT && tar czf all.tgz *.log *.json 2>/dev/null && rm -f *.log *.json; ls $OUT
