#!/bin/bash
# Session 11, device call 5 (722b466's lowering): global tokens + window at i32-edge parameters against float64;
# the sm_90 backward of window, global tokens + window and documents against float64 autograd; the catalogue's
# window and document entries (checks, then CuIR against FlexAttention, 3 interleaved rounds).
export PYTHONPATH=python
cd .dev/s11 && tar xJf stageAB.tar.xz && tar xJf cat.tar.xz && cd ../.. && tar xJf .dev/s11/bwdlibs.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
echo "== index edges"; timeout 80 python3 tools/gpu/check_index_edges.py .dev/s11/B --kernels sm90,sm80 > $OUT/edges.log 2>&1; echo rc=$?; tail -3 $OUT/edges.log
echo "== backward"; timeout 150 python3 tools/gpu/check_variant_bwd.py --libs build/variants-sm90 --names window,global_window,document --json $OUT/bwd.json > $OUT/bwd.log 2>&1; echo rc=$?; grep -iE "fail|passed|of [0-9]+" $OUT/bwd.log | tail -5
echo "== catalogue"; timeout 280 python3 tools/gpu/check_catalogue.py --run .dev/s11/cat --rounds 3 --json $OUT/cat.json > $OUT/cat.log 2>&1; echo rc=$?; grep -vi "warn\|_compile" $OUT/cat.log | tail -22
