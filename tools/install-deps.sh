#!/usr/bin/env bash
# Installs what CuIR builds and tests with, from Debian's package registry.
# The CUDA 13 toolkit is expected at /usr/local/cuda (it is not a Debian
# package); without it the kernels are not built.
# Every package the build, the tests or the main job use must be listed
# here: a machine keeps what earlier work installed, so a missing one shows
# only on a fresh machine (clang-tools-22, say: clang 22 links CUDA through
# its clang-linker-wrapper).
set -euo pipefail

packages=(
  cmake ninja-build
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  clang-22 clang-tools-22 libclang-22-dev
  nlohmann-json3-dev libcurl4-openssl-dev libgtest-dev
  python3-torch python3-numpy
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q \
  --no-install-recommends "${missing[@]}"
