#!/usr/bin/env python3
"""Interleaved A/B timing of catalogue entries staged twice (`check_catalogue.py --stage`), e.g. from two trees
whose kernels differ, beside torch.compile(flex_attention) in the same run. Run on the GPU machine:

  python3 tools/gpu/ab_catalogue.py --kernel sm90 A=DIR_A B=DIR_B [--rounds 5] [--json f] entry ...
  python3 tools/gpu/ab_catalogue.py --kernel sm90 bits=DIR eval=DIR --no-bits eval entry ...
  python3 tools/gpu/ab_catalogue.py --kernel sm90 persistent=DIR grid=DIR --env grid:CUIR_SM90_PERSISTENT=0 entry ...

With --env NAME:VAR=VALUE, build NAME's calls run with VAR set to VALUE in the environment (the other build's
with VAR unset): one library against itself under a switch its entry point reads at every call.

With --no-bits NAME, build NAME's block masks are made without the partial tiles' bits, so that its kernels
evaluate the mask: one library against itself times the bits against the mask's own arithmetic.

For each entry, at check_catalogue.py's bench shape (bf16), each build's runtime block mask is made once (as
FlexAttention's create_block_mask is; its time not counted), then every round times A, B and FlexAttention
once each, per call and back to back, in an order that alternates between rounds. The outputs of A and B are
compared first (max |B - A|: a changed schedule is not bitwise equal; check_catalogue.py --run checks each
build against float64). The table gives each one's median over the rounds and the ratios of the medians."""
import argparse
import json
import os
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1] / "python"), str(HERE)]

import check_catalogue as cc  # noqa: E402
from timing import compiled_flex_attention, interleaved_medians  # noqa: E402


def bench_library(stage_dir, kernel, entry_name):
    info = json.loads((stage_dir / "stage.json").read_text())
    for item in info["staged"]:
        if item["entry"] == entry_name and item["kernel"] == kernel and item["shape"] == "bench":
            return stage_dir / item["library"], info["shapes"]["bench"]
    raise SystemExit(f"{stage_dir}: no bench library of {entry_name} on {kernel}")


def flex_call(entry, tensors, q, k, v):
    from torch.nn.attention.flex_attention import create_block_mask
    score_mod, mask_mod = entry.mods(tensors)
    B, H, Nq, _ = q.shape
    bm = create_block_mask(mask_mod, B, H, Nq, k.shape[2], device="cuda") if mask_mod else None
    compiled = compiled_flex_attention()
    gqa = q.shape[1] != k.shape[1]
    return lambda: compiled(q, k, v, score_mod=score_mod, block_mask=bm, enable_gqa=gqa)


def with_env(fn, env, variables):
    """fn, called with `env` set and the rest of `variables` unset."""
    if not variables:
        return fn

    def call():
        for var in variables:
            if var in env:
                os.environ[var] = env[var]
            else:
                os.environ.pop(var, None)
        return fn()
    return call


def entry_calls(entry, builds, kernel, no_bits=(), envs=None):
    """Per build name, a callable running its bench library on the entry's bench-shape inputs (its block mask made
    once), and its output; "flex": torch.compile(flex_attention) on the same inputs, for a softmax entry."""
    import torch
    libs = {name: bench_library(d, kernel, entry.name) for name, d in builds.items()}
    shapes = {tuple(s) for _, s in libs.values()}
    if len(shapes) != 1:
        raise SystemExit(f"{entry.name}: the builds were staged at different bench shapes {shapes}")
    B, Hq, Hkv, Nq, Nkv, D = shapes.pop()
    tensors = {n: t.cuda() for n, t in entry.make(B, Hq, Nq, Nkv, "cpu").items()}
    q, k, v = cc._inputs(B, Hq, Hkv, Nq, Nkv, D, torch.bfloat16, seed=1)
    fns, outs = {}, {}
    for name, (lib, _) in libs.items():
        call = cc._kernel_call(lib, entry, tensors)
        bm = call.block_mask(q, k, mask_bits=False) if name in no_bits else call.block_mask(q, k)
        variables = {var for env in (envs or {}).values() for var in env}
        fns[name] = with_env((lambda c, m: lambda: c(q, k, v, False, m))(call, bm), (envs or {}).get(name, {}),
                             variables)
        outs[name] = fns[name]().float()
    if entry.normalizer == "softmax":
        fns["flex"] = flex_call(entry, tensors, q, k, v)
    return fns, outs


def ab_entry(entry, builds, kernel, rounds, no_bits=(), envs=None):
    fns, outs = entry_calls(entry, builds, kernel, no_bits, envs)
    a, b = list(builds)
    diff = (outs[b] - outs[a]).abs().max().item()
    med, times = interleaved_medians(fns, rounds)
    row = {"entry": entry.name, "max_abs_diff": diff, "ms": med, "rounds": times}
    line = f"{entry.name:<24} |B-A| {diff:.2e}"
    for n in fns:
        line += f"  {n} {med[n]['call']:.3f}/{med[n]['loop']:.3f}"
    line += f"  A/B {med[a]['call'] / med[b]['call']:.3f}/{med[a]['loop'] / med[b]['loop']:.3f}"
    if "flex" in med:
        for n in (a, b):
            line += f"  flex/{n} {med['flex']['call'] / med[n]['call']:.2f}/{med['flex']['loop'] / med[n]['loop']:.2f}"
    print(line, flush=True)
    return row


def main():
    import torch
    from cuir import catalogue
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernel", choices=["sm80", "sm90"], required=True)
    ap.add_argument("builds", nargs=2, metavar="NAME=DIR")
    ap.add_argument("entries", nargs="+")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", default=None)
    ap.add_argument("--no-bits", metavar="NAME", action="append", default=[],
                    help="make this build's block masks without the partial tiles' bits (repeatable)")
    ap.add_argument("--env", metavar="NAME:VAR=VALUE", action="append", default=[],
                    help="run this build's calls with VAR=VALUE in the environment (repeatable)")
    args = ap.parse_args()
    builds = {}
    for spec in args.builds:
        name, sep, path = spec.partition("=")
        if not sep or name == "flex" or name in builds:
            ap.error(f"a build is NAME=DIR with a NAME other than 'flex' and the other build's: {spec!r}")
        builds[name] = pathlib.Path(path)
    for name in args.no_bits:
        if name not in builds:
            ap.error(f"--no-bits {name}: no build of that name")
    envs = {}
    for spec in args.env:
        name, sep, assignment = spec.partition(":")
        var, eq, value = assignment.partition("=")
        if not sep or not eq or not var or name not in builds:
            ap.error(f"--env {spec!r}: NAME:VAR=VALUE with NAME a build")
        envs.setdefault(name, {})[var] = value
    print(f"{torch.cuda.get_device_name()}, {args.kernel}, {args.rounds} rounds; ms per call / back to back",
          flush=True)
    rows = [ab_entry(catalogue.get(name), builds, args.kernel, args.rounds, args.no_bits, envs)
            for name in args.entries]
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"device": torch.cuda.get_device_name(), "builds": {
            n: str(d) for n, d in builds.items()}, "no_bits": args.no_bits, "env": envs, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
