#!/bin/bash
# Session 11, device call 6: global tokens + window at Nq 640 > Nkv 256 on the sm_90 kernels: 722b466's lowering
# (new) failed there in call 5; the lowering before (81d2bb6, old) on the same check.
export PYTHONPATH=python
tar xJf .dev/s11/bwdlibs.tar.xz && cd .dev/s11 && tar xJf oldgw.tar.xz && cd ../..
nvidia-smi --query-gpu=name --format=csv,noheader
for d in build/variants-sm90 .dev/s11/oldlibs; do echo "== $d"; timeout 100 python3 tools/gpu/check_variant_bwd.py --libs $d --names global_window > $OUT/$(basename $d).log 2>&1; echo rc=$?; grep -E "N640|passed" $OUT/$(basename $d).log; done
