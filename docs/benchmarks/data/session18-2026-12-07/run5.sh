#!/bin/bash
# Session 18, call 3 (`bash run5.sh`; its stdout is call3/profile.txt): per-kernel GPU time of the backward (profile_bwd.py --breakdown), CuIR against cuDNN (sm_90) and
# FA2 (sm_80), on the rows below the peer. Carry build/kernels/sm90, build/kernels/sm80.
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader
p() { timeout 60 python3 tools/gpu/profile_bwd.py --breakdown --launches 2 "$@" 2>&1 | grep -v Warning | cut -c1-160; echo "rc=$? t=$((SECONDS - T0))"; }
p --kernel sm90 --config llama2-7b --N 2048
p --kernel sm90 --config llama2-7b --N 8192
p --kernel sm90 --config llama3.1-405b --N 8192
p --kernel sm90 --config llama2-7b --N 2048 --causal
p --kernel sm80 --config llama3.1-405b --N 8192 --causal --who fa2
p --kernel sm80 --config llama3.1-405b --N 8192 --causal --who cuir
