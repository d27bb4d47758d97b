#!/bin/bash
# Builds tuning variants of the sm_90 kernel library next to the regular build (here, where clang is):
#   build_sm90_variants.sh <kernels build dir> NAME=FLAGS ...
# e.g. build_sm90_variants.sh build-sm90/kernels "bn176=-DCUIR_SM90_BLOCK_N_D128=176" "nopp=-DCUIR_SM90_PINGPONG=0"
# writes <dir>/sm90-variants/libcuir_flash_fwd_sm90_NAME.so and the ptxas -v report of each variant
# (flash_fwd_NAME.ptxas.log; the script fails if ptxas reports a spill). Knobs: see kernels/sm90/flash_fwd.cu.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$1; shift
mkdir -p "$dir/sm90-variants"
CLANG=${CLANG:-/usr/lib/llvm-22/bin/clang++}
CUDA=${CUDA:-/usr/local/cuda}
flags=(-x cuda --cuda-path=$CUDA -Wno-unknown-cuda-version -I$CUDA/include/cccl -I$root/kernels/include
       -O3 -std=c++17 -Wall -Werror --cuda-gpu-arch=sm_90a)
for spec in "$@"; do
  name=${spec%%=*}
  read -r -a defs <<< "${spec#*=}"
  out=$dir/sm90-variants
  "$CLANG" "${flags[@]}" "${defs[@]}" --cuda-device-only -S "$root/kernels/sm90/flash_fwd.cu" -o "$out/flash_fwd_$name.ptx"
  "$CUDA/bin/ptxas" -arch=sm_90a -v "$out/flash_fwd_$name.ptx" -o "$out/flash_fwd_$name.cubin" 2> "$out/flash_fwd_$name.ptxas.log"
  if grep -q "[1-9][0-9]* bytes spill" "$out/flash_fwd_$name.ptxas.log"; then
    echo "variant $name spills:"; grep spill "$out/flash_fwd_$name.ptxas.log"; exit 1
  fi
  "$CLANG" "${flags[@]}" "${defs[@]}" -fPIC -shared -fvisibility=hidden "$root/kernels/sm90/flash_fwd.cu" \
    -o "$out/libcuir_flash_fwd_sm90_$name.so" -L$CUDA/lib64 -lcudart_static -ldl -lpthread -lrt
  rm -f "$out/flash_fwd_$name.ptx"
  echo "variant $name (${defs[*]}): $out/libcuir_flash_fwd_sm90_$name.so, $(grep -c 'Used 168 registers' "$out/flash_fwd_$name.ptxas.log") entries at 168 registers, no spills"
done
