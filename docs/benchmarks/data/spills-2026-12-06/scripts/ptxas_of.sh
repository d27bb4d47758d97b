#!/bin/bash
# ptxas -v of a patched sm80/sm90 forward .cu: spills per flash_fwd instantiation.
cu=$1; kdir=$2; arch=${3:-sm_90}; inc=$(dirname $cu)
clang++-22 -x cuda --cuda-path=/usr/local/cuda -Wno-unknown-cuda-version -I$inc -I/usr/local/cuda/include/cccl -I$kdir -I/work/main/kernels/include -O3 -std=c++17 --cuda-gpu-arch=$arch --cuda-device-only -S $cu -o /tmp/ptxas_of.ptx || exit 1
/usr/local/cuda/bin/ptxas -arch=$arch -O3 -v /tmp/ptxas_of.ptx -o /tmp/ptxas_of.cubin 2>&1 | awk '/Function properties for .*flash_fwd_sm/ {match($0,/E[01]ELi[0-9]+ELb[01]/); f=substr($0,RSTART,RLENGTH); getline; print f": "$0}'
