#!/usr/bin/env bash
# Copies what the GPU machine needs of build/variants and the base kernel
# (libraries and manifests only: the PTX stays here) into build/variant-libs;
# KERNEL=sm90: build/variants-sm90 into build/variant-libs-sm90.
set -euo pipefail
cd "$(dirname "$0")/../.."
KERNEL=${KERNEL:-sm80}
suffix=$([ "$KERNEL" = sm80 ] || echo "-$KERNEL")
libs=build/variant-libs$suffix
rm -rf "$libs"
mkdir -p "$libs/base"
cp "build/kernels/$KERNEL/libcuir_flash_fwd_$KERNEL.so" "$libs/base/"
for d in build/variants$suffix/*/; do
  n=$(basename "$d")
  mkdir -p "$libs/$n"
  cp "$d/lib$n.so" "$d/$n.json" "$libs/$n/"
  # The variant's backward pass, where BWD=1 build_variants.sh lowered it.
  if [ -f "$d/lib${n}_bwd.so" ]; then cp "$d/lib${n}_bwd.so" "$d/${n}_bwd.json" "$libs/$n/"; fi
done
du -sh "$libs"
