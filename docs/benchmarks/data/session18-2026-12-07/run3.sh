#!/bin/bash
# Ran in session 18 (2026-12-07) on one H100 as `LIM=250 bash docs/benchmarks/data/session18-2026-12-07/run3.sh`
# (then named run3-not-run.sh in the session 17 folder); logs and JSON in call1/.
# Session 17, prepared for a third call and not run (too little device time was left to start a machine): does the
# sm_90 backward's paired code cost MHA? llama2-7b (MHA, never paired) and the GQA configurations at 8k with
#   build/kernels/sm90/libcuir_flash_bwd_sm90.so  the committed kernel (HEAD)
#   .dev/s90b/libbwd90_prepairs.so                 the kernel before the pairs (be1f87d)
#   .dev/s90p/libbwd90_paired_tmpl.so              HEAD with sm90-paired-template.patch: the pairs a template
#                                                  parameter, chosen at launch, so that MHA and full attention
#                                                  run code without the tile loop and the per-tile fences
# each built here with the CMake build's clang++ line (-I the folder of the kernel's headers), alternating, two
# rounds. Run as bash run3.sh, carrying build/kernels/sm90, .dev/s90b and .dev/s90p.
T0=$SECONDS; LIM=${LIM:-240}
b() { [ $((SECONDS - T0)) -gt $((LIM - 20)) ] && return; timeout 40 python3 tools/gpu/bench_bwd.py --kernel sm90 --lib $2 --configs $3 ${4:+--N $4} --json $OUT/b_$1.json > $OUT/b_$1.log 2>&1; echo bench $1 rc=$? t=$((SECONDS - T0)); grep '^{' $OUT/b_$1.log | sed 's/"config": //; s/, "B": [0-9]*//; s/"N": //; s/"causal": //' | cut -c1-150; }
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 60 python3 tools/gpu/check_bwd.py --kernel sm90 --lib .dev/s90p/libbwd90_paired_tmpl.so --quick > $OUT/check_tmpl.log 2>&1
echo check tmpl rc=$?; tail -1 $OUT/check_tmpl.log
for r in 1 2; do
  b head_m_r$r build/kernels/sm90/libcuir_flash_bwd_sm90.so llama2-7b
  b prepairs_m_r$r .dev/s90b/libbwd90_prepairs.so llama2-7b
  b tmpl_m_r$r .dev/s90p/libbwd90_paired_tmpl.so llama2-7b
done
b head_g8 build/kernels/sm90/libcuir_flash_bwd_sm90.so qwen2.5-72b,llama3.1-405b 8192
b tmpl_g8 .dev/s90p/libbwd90_paired_tmpl.so qwen2.5-72b,llama3.1-405b 8192
cd $OUT && tar czf all3.tgz *.log *.json && rm -f *.log *.json
