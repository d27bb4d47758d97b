"""cuir.compile's name becomes the stem of the files it writes: only an identifier is taken (a path such as
'../x' would write outside out_dir), refused before anything is built or written; without a name, one made
from the spec (a variant file's stem, a built-in spec's first part) with other characters as '_'."""
import importlib
import pathlib
import tempfile

import cuir

comp = importlib.import_module("cuir.compile")  # the module (cuir.compile is the function)
out = pathlib.Path(tempfile.mkdtemp())
for name in ("../../escaped", "a/b", "", "x.y", 7):
    try:
        cuir.compile("causal", name=name, out_dir=out / "o", load=False)
        print("accepted", repr(name))
    except ValueError as e:
        print("refused", repr(name), "-", e)
print("nothing written:", not (out / "o").exists() and not (out.parent / "escaped.cu").exists())
for spec in ("softcap{cap=30},causal", "global-window", "dir/my-variant.mlir", "9lives.mlir"):
    print(repr(spec), "->", comp._file_stem(None, spec))
print("traced ->", comp._file_stem(None, None), "; given ->", comp._file_stem("alibi_2", "causal"))
