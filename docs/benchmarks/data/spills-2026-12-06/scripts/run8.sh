#!/bin/bash
# Session 11, device call 8: global tokens + window at Nq 640 > Nkv 256 (sm_90) without the partial tiles' bits.
export PYTHONPATH=python
tar xJf .dev/s11/bwdlibs.tar.xz
for env in "CUIR_MASK_BITS=0"; do echo "== $env"; env $env timeout 60 python3 tools/gpu/check_variant_bwd.py --libs build/variants-sm90 --names global_window > $OUT/nobits.log 2>&1; echo rc=$?; grep -E "N640|passed" $OUT/nobits.log; done
