#!/bin/bash
# Session 12, device call 3: the equivalent spellings again at 2k (12 rounds: the two pairs outside 3% in call 1
# had rounds' ranges straddling 1), and the five of DESIGN section 8 at 8k against FlexAttention (new lowering).
export PYTHONPATH=python
cd .dev && tar xJf s12/ab.tar.xz && cd ..
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
BB=tools/gpu/bench_block_sparse.py
for r in bb-new bb-sp; do echo "== spellings $r"; timeout 90 python3 $BB --run .dev/ab/$r --kernels sm90 --no-check --no-bench --n 2048 --configs llama2-7b,qwen2.5-72b --spellings 12 --json $OUT/sp2-$r.json > $OUT/sp2-$r.log 2>&1; echo rc=$?; grep -E "^\||within" $OUT/sp2-$r.log; done
echo "== five at 8k vs Flex"; timeout 100 python3 $BB --run .dev/ab/bb-new --kernels sm90 --no-check --n 8192 --names softcap_causal,alibi_causal --json $OUT/five-a.json > $OUT/five-a.log 2>&1; echo rc=$?; grep -E "^\| sm" $OUT/five-a.log
timeout 60 python3 $BB --run .dev/ab/bb-sp --kernels sm90 --no-check --n 8192 --names causal --json $OUT/five-b.json > $OUT/five-b.log 2>&1; echo rc=$?; grep -E "^\| sm" $OUT/five-b.log
timeout 90 python3 $BB --run .dev/ab/bb-five --kernels sm90 --no-check --n 8192 --names prefixlm,window --json $OUT/five-c.json > $OUT/five-c.log 2>&1; echo rc=$?; grep -E "^\| sm" $OUT/five-c.log
