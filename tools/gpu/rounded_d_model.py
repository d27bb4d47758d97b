#!/usr/bin/env python3
"""A float64 model of how the kernels' rounding moves a trained ALiBi slope's gradient (CPU, no kernel).

The backward forms dS = P * (dP - D) with D = rowsum(dO * O) from the 16-bit O (itself from P rounded to 16
bits before P V), so a row's dS do not sum to 0 exactly, and the slope's gradient sum(dS * (kv - q)) picks up
that residue times the partial's per-row part. Prints, per shape, the gradient's error relative to the exact
one for: D from the bf16 O (the kernels before centring); D from the fp32 O; the partial centred on the
row's reference key kv = min(q, Nkv - 1) (the kernels since session 15 for a top-left distance like this one,
docs/Backward.md); both; and centred on
the row's P-weighted mean of the partial (exact: D drops out).
Usage: /usr/bin/python3 tools/gpu/rounded_d_model.py
"""
import torch


def bf16(x):
    return x.to(torch.bfloat16).double()


def setup(B, H, Nq, Nkv, D, causal, seed):
    torch.manual_seed(seed)
    q, k, v = (bf16(torch.randn(B, H, n, D)) for n in (Nq, Nkv, Nkv))
    slopes = torch.tensor([2 ** (-8 * (h + 1) / H) for h in range(H)], dtype=torch.float64)
    qi, ki = torch.arange(Nq).view(Nq, 1), torch.arange(Nkv).view(1, Nkv)
    dist = (ki - qi).double()  # the slope's partial
    s = q @ k.transpose(-1, -2) * D ** -0.5 + slopes.view(1, H, 1, 1) * dist
    if causal:
        s = s.masked_fill(ki > qi, float("-inf"))
    unnormalised = torch.exp(s - s.amax(-1, keepdim=True))
    rowsum = unnormalised.sum(-1, keepdim=True)
    p = unnormalised / rowsum
    o32 = (bf16(unnormalised) @ v) / rowsum  # the forward's P V on 16-bit P, in fp32
    d_o = bf16(torch.randn(B, H, Nq, D))
    dp = d_o @ v.transpose(-1, -2)
    rows = {"exact": (d_o * (p @ v)).sum(-1, keepdim=True), "o16": (d_o * bf16(o32)).sum(-1, keepdim=True),
            "o32": (d_o * o32).sum(-1, keepdim=True)}
    reference_key = (torch.clamp(qi, max=Nkv - 1) - qi).double()
    mean = (p * dist).sum(-1, keepdim=True)

    def gradient(d_row, centre=0.0):
        return (p * (dp - d_row) * (dist - centre)).sum((0, 2, 3))
    return gradient, rows, reference_key, mean


def main(seeds=8):
    print(f"error of the slopes' gradient relative to the exact one (root mean square over {seeds} draws)")
    for B, H, Nq, Nkv, D, causal in ((3, 6, 300, 7, 32, False), (1, 6, 640, 256, 128, False),
                                     (1, 6, 2048, 512, 64, False), (2, 8, 777, 1024, 64, False),
                                     (2, 8, 777, 1024, 64, True), (2, 4, 1000, 1313, 128, False)):
        kinds = ("D of bf16 O", "of fp32 O", "centred on the reference key", "with fp32 O", "on the row's mean")
        sq, norm = [0.0] * len(kinds), 0.0
        for seed in range(seeds):
            g, d, ref, mean = setup(B, H, Nq, Nkv, D, causal, seed)
            exact = g(d["exact"])
            got = (g(d["o16"]), g(d["o32"]), g(d["o16"], ref), g(d["o32"], ref), g(d["o16"], mean))
            sq = [a + ((x - exact) ** 2).sum().item() for a, x in zip(sq, got)]
            norm += (exact ** 2).sum().item()
        print(f"B {B} H {H} Nq {Nq} Nkv {Nkv}{' causal' if causal else ''}: " +
              ", ".join(f"{k} {(e / norm) ** 0.5:.1e}" for k, e in zip(kinds, sq)))


if __name__ == "__main__":
    main()
