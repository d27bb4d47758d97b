#!/bin/bash
# Session 16: the sm_90 backward with causal KV tiles paired (t, T-1-t) per thread block (the build of the
# working tree, libbwd90_pair.so) against the committed kernel (libbwd90_base.so): checks, bench alternating,
# racecheck, the catalogue's backward staged from the working tree. Run as LIM=330 bash run1.sh.
D=.dev/pair
T0=$SECONDS
LIM=${LIM:-580}
left() { echo $((LIM - (SECONDS - T0))); }
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
timeout 100 python3 tools/gpu/check_bwd.py --kernel sm90 --lib $D/libbwd90_pair.so --quick > $OUT/check90_pair.log 2>&1; echo check90 rc=$? t=$((SECONDS - T0)); tail -2 $OUT/check90_pair.log
bench() {  # kernel variant tag configs [N...]
  [ $(left) -lt 60 ] && return
  local k=$1 v=$2 tag=$3 cf=$4; shift 4
  timeout $(( $(left) < 130 ? $(left) - 10 : 120 )) python3 tools/gpu/bench_bwd.py --kernel $k --lib $D/libbwd${k#sm}_$v.so --configs $cf ${1:+--N $@} --json $OUT/b${k}_${v}_$tag.json > $OUT/b${k}_${v}_$tag.log 2>&1; echo bench $k $v $tag rc=$? t=$((SECONDS - T0)); grep '^{' $OUT/b${k}_${v}_$tag.log | sed 's/"config": //; s/, "B": [0-9]*//' | cut -c1-150
}
GQA=qwen2.5-72b,llama3.1-405b
bench sm90 pair g8 $GQA 8192; bench sm90 base g8 $GQA 8192
[ $(left) -gt 100 ] && { timeout 90 compute-sanitizer --tool racecheck python3 tools/gpu/check_bwd.py --kernel sm90 --lib $D/libbwd90_pair.so --sanitize > $OUT/racecheck90_pair.log 2>&1; echo racecheck rc=$? t=$((SECONDS - T0)); tail -2 $OUT/racecheck90_pair.log; }
[ $(left) -gt 100 ] && { timeout 90 python3 tools/gpu/check_catalogue_bwd.py --run .dev/cb90 --kernel sm90 --no-bench > $OUT/cb90.log 2>&1; echo cb90 rc=$? t=$((SECONDS - T0)); tail -4 $OUT/cb90.log; }
bench sm90 pair g2 $GQA 2048; bench sm90 base g2 $GQA 2048
bench sm90 pair m1 llama2-7b; bench sm90 base m1 llama2-7b
bench sm90 pair g8b $GQA 8192; bench sm90 base g8b $GQA 8192
cd $OUT && tar czf all.tgz *.log *.json 2>/dev/null && rm -f *.log *.json; ls $OUT
