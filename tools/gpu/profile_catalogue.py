#!/usr/bin/env python3
"""A few calls of one catalogue entry at the bench shape (check_catalogue.py's), through a staged CuIR library
(its block mask made once) or through torch.compile(flex_attention), for ncu:

    ncu -k regex:flash_fwd_sm90_kernel --launch-skip 2 --launch-count 1 --section SpeedOfLight \\
        --section WarpStateStats python3 tools/gpu/profile_catalogue.py cuir document_causal build/catalogue-final
    ncu -k regex:triton --launch-skip 2 --launch-count 1 ... python3 tools/gpu/profile_catalogue.py flex document_causal
"""
import argparse
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tools" / "gpu")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("which", choices=("cuir", "flex"))
    ap.add_argument("entry")
    ap.add_argument("stage", nargs="?", type=pathlib.Path, default=ROOT / "build" / "catalogue-final",
                    help="check_catalogue.py --stage DIR (for cuir)")
    ap.add_argument("--calls", type=int, default=4)
    args = ap.parse_args()
    import torch
    import check_catalogue as cc
    from cuir import catalogue
    B, Hq, Hkv, Nq, Nkv, D = cc.SHAPES["bench"]
    entry = catalogue.get(args.entry)
    tensors = {n: t.cuda() for n, t in entry.make(B, Hq, Nq, Nkv, "cpu").items()}
    q, k, v = cc._inputs(B, Hq, Hkv, Nq, Nkv, D, torch.bfloat16, seed=1)
    if args.which == "cuir":
        info = json.loads((args.stage / "stage.json").read_text())
        lib = next(i["library"] for i in info["staged"]
                   if i["entry"] == args.entry and i["shape"] == "bench" and i["kernel"] == "sm90")
        call = cc._kernel_call(args.stage / lib, entry, tensors)
        bm = call.block_mask(q, k)
        for _ in range(args.calls):
            call(q, k, v, False, bm)
    else:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
        score_mod, mask_mod = entry.mods(tensors)
        fbm = create_block_mask(mask_mod, B, Hq, Nq, Nkv, device="cuda") if mask_mod else None
        flex = torch.compile(flex_attention, dynamic=False)
        for _ in range(args.calls):
            flex(q, k, v, score_mod=score_mod, block_mask=fbm, enable_gqa=Hq != Hkv)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
