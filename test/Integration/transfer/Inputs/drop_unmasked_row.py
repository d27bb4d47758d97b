"""Drops the unmasked steps' query-row statement from the sm90 backward's Source CuIR (the second
`%q_row0 = arith.muli` of every kernel): that step then computes no coordinate of its score tile.
Usage: drop_unmasked_row.py IN OUT"""
import re
import sys

text = open(sys.argv[1]).read()
kernels = text.split("cuir.launch_sequence")
out = []
for k in kernels:
    rows = [m for m in re.finditer(r"\n *%q_row0 = arith\.muli [^\n]*", k)]
    if len(rows) >= 2:
        k = k[:rows[1].start()] + k[rows[1].end():]
    out.append(k)
open(sys.argv[2], "w").write("cuir.launch_sequence".join(out))
