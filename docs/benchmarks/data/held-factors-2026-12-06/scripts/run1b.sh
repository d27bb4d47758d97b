#!/bin/bash
# Session 12, device call 1: the scores helper's per-call factors of scaled positions held in the KV loop (new,
# commit 5eaccee) against the lowering before (old, b2ad504). First the checks against float64: the catalogue's
# block-mask entries at check_catalogue.py's new "tall" shape (B1 H6/1, Nq 640 > Nkv 256: the bits bug's shape),
# and new's changed entries at the ragged and GQA shapes; then the A/B of the changed catalogue entries (both
# kernels) and built-ins (sm_90), interleaved; then the equivalent spellings against their built-ins (sm_90).
export PYTHONPATH=python
cd .dev && tar xJf s12/ab.tar.xz && cd ..
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
CHK=tools/gpu/check_catalogue.py; BB=tools/gpu/bench_block_sparse.py
E="alibi alibi_causal softcap_alibi_window alibi_sigmoid_document"
for k in sm80 sm90; do echo "== A/B catalogue $k"; timeout 90 python3 tools/gpu/ab_catalogue.py --kernel $k new=.dev/ab/cat-new old=.dev/ab/cat-old --rounds 5 --json $OUT/ab-cat-$k.json $E > $OUT/ab-cat-$k.log 2>&1; echo rc=$?; grep -E "^\|" $OUT/ab-cat-$k.log; done
echo "== A/B built-ins sm90"; timeout 60 python3 $BB --run .dev/ab/bb-new --ab .dev/ab/bb-old --kernels sm90 --rounds 5 --json $OUT/ab-bb.json > $OUT/ab-bb.log 2>&1; echo rc=$?; grep -E "^\|" $OUT/ab-bb.log
for r in bb-new; do echo "== spellings $r"; timeout 70 python3 $BB --run .dev/ab/$r --kernels sm90 --no-check --no-bench --spellings 6 --json $OUT/sp-$r.json > $OUT/sp-$r.log 2>&1; echo rc=$?; grep -E "^\||within" $OUT/sp-$r.log; done
