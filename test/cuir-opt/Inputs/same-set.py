"""Checks that the outputs of one lowering in DIR belong to one variant.

    same-set.py DIR STEM WORD1 WORD2

Exactly one of the words (each naming one variant's parameter) must occur in
STEM.cu, STEM.json, STEM.target.cuir.mlir and the lines STEM.diff adds, and
the same one in each.
"""
import os
import sys

d, stem, words = sys.argv[1], sys.argv[2], sys.argv[3:]


def text(suffix):
    t = open(os.path.join(d, stem + suffix), errors="replace").read()
    if suffix == ".diff":
        t = "\n".join(l for l in t.splitlines()
                      if l.startswith("+") and not l.startswith("+++"))
    return t


seen = {s: [w for w in words if w in text(s)]
        for s in (".cu", ".json", ".target.cuir.mlir", ".diff")}
if any(len(v) != 1 for v in seen.values()) or len(
        {v[0] for v in seen.values()}) != 1:
    sys.exit("mixed or torn set: %s" % seen)
