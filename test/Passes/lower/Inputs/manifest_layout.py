"""A lowered variant's manifest against its params header: the fields of the variant section of
cuir/attention_params.h, in order, and those of the ctypes struct variant_lib builds from <stem>.json (with a
stand-in for the library, which this test does not compile). Prints both lists and whether they agree, and
the block mask's entries and tiles as the loader reads them."""
import ctypes
import json
import pathlib
import re
import sys

from cuir import block_mask as bml
from cuir.variant_lib import VariantKernel

out = pathlib.Path(sys.argv[1])
stem = sys.argv[2]
header = (out / "cuir" / "attention_params.h").read_text()
section = header[header.index("CUIR VARIANT PARAMETERS END"):header.index("} cuir_attention_params;")]
in_header = re.findall(r"^\s+(?:const )?\w+ \*?(\w+);", section, flags=re.M)


class StandIn:
    """The library's symbols that the manifest names (this test compiles nothing)."""

    def __init__(self, kern, names):
        for n in names:
            setattr(self, n, lambda *a: 0)
        # the loader compares sizeof(cuir_attention_params) with its struct: this stand-in has no other
        self.cuir_attention_params_sizeof = lambda: ctypes.sizeof(kern.params_type)


manifest = json.loads((out / f"{stem}.json").read_text())
names = [manifest["block_mask"][n] for n in ("entry", "dims_entry", "attention_entry")]
kern = VariantKernel.__new__(VariantKernel)
VariantKernel.__init__(kern, out / f"lib{stem}.so", lib=StandIn(kern, names))
in_struct = [name for name, _ in kern.params_type._fields_][1:]
print("header:", in_header)
print("struct:", in_struct, "agree:", in_header == in_struct)
for t in kern.block_mask_info["tiles"]:
    print("tiles at head dim", t["head_dim"], bml.tiles_for(kern.block_mask_info, t["head_dim"]))
