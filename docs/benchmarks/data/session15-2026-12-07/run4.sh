#!/bin/bash
# Session 15, device call 4: the centred parameter gradients with the two-diagonal reference key (commit e7554c1),
# both backward kernels, against float64 autograd with check_catalogue_bwd.py's model of the rounding.
export PYTHONPATH=python
D=.dev/s15
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
(cd $D && tar xJf cb2.tar.xz)
timeout 200 python3 tools/gpu/check_catalogue_bwd.py --run $D/cb90 --kernel sm90 --no-bench --json $OUT/cb90.json > $OUT/cb90.log 2>&1
echo cb90 rc=$?; grep -vE "^cuir.variant" $OUT/cb90.log
timeout 120 python3 tools/gpu/check_catalogue_bwd.py --run $D/cb80 --kernel sm80 --no-bench --json $OUT/cb80.json > $OUT/cb80.log 2>&1
echo cb80 rc=$?; grep -vE "^cuir.variant" $OUT/cb80.log
