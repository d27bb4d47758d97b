#!/usr/bin/env bash
# Copies what the GPU machine needs of build/variants and the base kernel
# (libraries and manifests only: the PTX stays here) into build/variant-libs.
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf build/variant-libs
mkdir -p build/variant-libs/base
cp build/kernels/sm80/libcuir_flash_fwd_sm80.so build/variant-libs/base/
for d in build/variants/*/; do
  n=$(basename "$d")
  mkdir -p "build/variant-libs/$n"
  cp "$d/lib$n.so" "$d/$n.json" "build/variant-libs/$n/"
done
du -sh build/variant-libs
