#!/bin/bash
# Session 11, device call 12: memcheck over the block mask's classification at shapes whose rows have no partial
# tiles (bits_probe.py: the bits against the mask, per tile), and the forward + backward check under memcheck.
export PYTHONPATH=python
tar xJf .dev/s11/bwdlibs2.tar.xz
timeout 100 compute-sanitizer --tool memcheck python3 .dev/s11/bits_probe.py build/variants-sm90/global_window/libglobal_window.so > $OUT/probe.log 2>&1; echo rc=$?; grep -E "ERROR SUMMARY|mismatches" $OUT/probe.log
timeout 120 compute-sanitizer --tool memcheck python3 tools/gpu/check_variant_bwd.py --libs build/variants-sm90 --names global_window --sanitize > $OUT/bwd-memcheck.log 2>&1; echo rc=$?; grep -E "ERROR SUMMARY|N640|passed|ok$" $OUT/bwd-memcheck.log | tail -6
