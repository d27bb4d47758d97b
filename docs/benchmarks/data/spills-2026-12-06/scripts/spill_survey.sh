#!/bin/bash
# ptxas spills of each built-in (and a few composites) on each forward kernel, with the split.
out=${OUTDIR:-/tmp/spill}; mkdir -p $out
for k in sm80 sm90; do
  arch=sm_90; [ $k = sm90 ] && arch=sm_90a
  for v in causal prefixlm softcap sigmoid alibi window global-window document prefixlm+softcap softcap+causal alibi+causal sigmoid+window document+causal; do
    n=$(echo $v | tr '+' '_')
    msg=$(/work/main/build/bin/cuir-opt /work/main/kernels/$k/flash_fwd.cu --lift --transfer=$v --cuir-split-full-partial --lower=archs=$arch -o $out/$k-$n/$n.cu 2>&1 | grep -o "spills up to [0-9]* bytes" )
    echo "$k $v: ${msg:-no spills}"
  done
done
