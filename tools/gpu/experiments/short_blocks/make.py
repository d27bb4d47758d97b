#!/usr/bin/env python3
"""Experiment (not the product): where does a short thread block of a runtime block mask spend its time? The
catalogue's document, prefix_document and dilated run at 1.0-1.2x FlexAttention (docs/benchmarks/catalogue.md)
with 2-4 partial KV tiles a query block; a persistent kernel did not help. This ablates one piece at a time of
the staged sm_90 bench library (check_catalogue.py --stage DIR --kernels sm90 ENTRY), so that the time a piece
costs is the difference to the unpatched library (device/H200.md: "time variants that leave one stage out"):
  orig        as lowered
  nomask      the partial tiles' mask and score hook not called (wrong output; the mask's cost)
  noorder     the heavy-first order's lookup replaced by the expert grid order (the indirection's cost)
  empty       every block ends after reading its lists, writing O = 0 and LSE = -inf (the fixed cost a block
              pays outside its tile loop, less the epilogue)
  nostore     the epilogue's O store left out (LSE still written; the store's cost)
  nopingpong  built with -DCUIR_SM90_PINGPONG=0 (the consumers do not take turns issuing GEMMs)
Only "orig" computes the right output; ab.py times them interleaved.

  make.py STAGE_DIR OUT [entry ...]   (here) builds OUT/<entry>/<ablation>.so and .json
  ab.py OUT [entry ...]               (GPU)"""
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
NAMES = ("orig", "nomask", "noorder", "empty", "nostore", "nopingpong")

ENTRIES = ("document", "prefix_document", "dilated")


def replace_once(s, old, new):
    assert s.count(old) == 1, f"anchor found {s.count(old)} times: {old[:80]!r}"
    return s.replace(old, new)


def nomask(src):
    i = src.index("      cuir_variant_scores<true>(acc_s,")
    j = src.index("\n", i)
    return src[:i] + "      // ablated: the partial tiles' scores" + src[j:]


def noorder(src):
    i = src.index("  const cuir_kernels::ListedQueryOrder query_order{")
    j = src.index("\n", i)
    return src[:i] + "  const cuir_kernels::ExpertQueryOrder query_order{};  // ablated" + src[j:]


def empty(src):
    return replace_once(src, "  if (n_block_max <= 0) {\n", "  n_block_max = 0;  // ablated\n  if (n_block_max <= 0) {\n")


def nostore(src):
    return replace_once(src, "      *reinterpret_cast<uint4 *>(o_head + (m_start + row) * params.o_row_stride + chunk * 8) = data;",
                        "      (void)data;  // ablated: the O store")


def nopingpong(src):
    return "#define CUIR_SM90_PINGPONG 0  // ablated\n" + src


ABLATIONS = {"orig": lambda s: s, "nomask": nomask, "noorder": noorder, "empty": empty, "nostore": nostore,
             "nopingpong": nopingpong}


def main(stage, out, entries):
    import importlib.util
    spec = importlib.util.spec_from_file_location("prefetch_make", HERE.parent / "prefetch_gathers" / "make.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    build = mod.build  # lib/Lower/Compile.cpp's command lines
    info = json.loads((stage / "stage.json").read_text())
    for entry in entries:
        item = next(i for i in info["staged"] if i["entry"] == entry and i["kernel"] == "sm90" and i["shape"] == "bench")
        lib = stage / item["library"]
        cu = lib.parent / f"{entry}.cu"
        src = cu.read_text()
        where = out / entry
        where.mkdir(parents=True, exist_ok=True)
        for name, ablate in ABLATIONS.items():
            patched = where / f"{name}.cu"
            patched.write_text(ablate(src))
            build(patched, cu.parent, where / f"{name}.so")
            (where / f"{name}.json").write_text(cu.with_suffix(".json").read_text())


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3:] or ENTRIES)
