#!/bin/bash
# Session 13, device call 2: (1) the sm_80 backward with the KV block slowest under causal GQA: check_bwd --quick,
# then bench_bwd on it and on the library before, alternating, two rounds (causal GQA rows); (2) the rest of the
# catalogue against FlexAttention, sm_90.
export PYTHONPATH=python
cd .dev/s13 && tar xJf cat90.tar.xz && cd ../..
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
L=.dev/s13/bwd80
timeout 150 python3 tools/gpu/check_bwd.py --kernel sm80 --lib $L/libafter.so --quick > $OUT/check_bwd80.log 2>&1; echo check rc=$?; tail -3 $OUT/check_bwd80.log
for r in 1 2; do for v in after before; do
  timeout 90 python3 tools/gpu/bench_bwd.py --kernel sm80 --lib $L/lib$v.so > $OUT/bench_bwd80_${v}_$r.log 2>&1; echo bench $v $r rc=$?; grep -E "causal|full" $OUT/bench_bwd80_${v}_$r.log | tail -12
done; done
timeout 250 python3 tools/gpu/check_catalogue.py --run .dev/s13/cat90 --kernels sm90 --rounds 3 --json $OUT/cat2.json --md $OUT/cat2.md causal bidirectional_window prefix_lm key_padding random_mask alibi relative_bias t5_bucket log_distance softcap softcap_causal learned_softcap causal_score_mod sigmoid sigmoid_causal alibi_causal softcap_alibi_window alibi_sigmoid_document > $OUT/cat2.log 2>&1; echo cat2 rc=$?; grep "sm90  bench" $OUT/cat2.log
