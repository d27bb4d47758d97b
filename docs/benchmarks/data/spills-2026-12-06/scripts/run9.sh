#!/bin/bash
export PYTHONPATH=python
tar xJf .dev/s11/bwdlibs.tar.xz
timeout 100 python3 .dev/s11/bits_probe.py build/variants-sm90/global_window/libglobal_window.so 2>&1 | tail -12
