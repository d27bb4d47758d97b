#!/bin/bash
# Session 11, device call 11: compute-sanitizer memcheck over the issue bench's checks of global tokens + window
# and documents on the sm_90 kernel (the classification now also writes a row's first full tile's bits).
export PYTHONPATH=python
cd .dev/s11 && tar xJf stageC.tar.xz && cd ../..
timeout 200 compute-sanitizer --tool memcheck python3 tools/gpu/bench_block_sparse.py --run .dev/s11/C --kernels sm90 --no-bench --no-flex-check > $OUT/memcheck.log 2>&1; echo rc=$?; grep -E "ERROR SUMMARY| ok|FAIL" $OUT/memcheck.log | tail -8
