#!/bin/bash
# Session 11, device call 7: global tokens + window at Nq 640 > Nkv 256 (sm_90, fails since the persistent kernel):
# under one thread block an item, under the round-robin schedule, and as it is.
export PYTHONPATH=python
tar xJf .dev/s11/bwdlibs.tar.xz
for env in "CUIR_SM90_PERSISTENT=0" "CUIR_SM90_TICKETS=0" "CUIR_SM90_PERSISTENT=2" "X=1"; do echo "== $env"; env $env timeout 60 python3 tools/gpu/check_variant_bwd.py --libs build/variants-sm90 --names global_window > $OUT/$env.log 2>&1; echo rc=$?; grep -E "N640|passed" $OUT/$env.log; done
