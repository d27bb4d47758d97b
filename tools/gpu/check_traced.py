"""GPU check of the Python path: a variant built by cuir.compile from a
FlexAttention-style score_mod/mask_mod (tools/gpu/build_variants.sh builds it
into build/variants/alibi_traced with test/Integration/Python/Inputs/build_traced.py),
loaded with cuir.load_variant and called on torch tensors without passing the
captured slopes, against a float64 PyTorch reference on fresh random inputs.
Usage: python3 tools/gpu/check_traced.py <dir with libalibi_traced.so>"""
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
import cuir  # noqa: E402

lib = pathlib.Path(sys.argv[1]) / "libalibi_traced.so"
attn = cuir.load_variant(lib)
slopes = torch.tensor([0.5, 0.25], dtype=torch.float64, device="cuda")  # as captured in build_traced.py
bad = 0
for B, Hq, Hkv, N, d, dt in [(2, 2, 1, 1000, 128, torch.bfloat16), (1, 2, 2, 333, 64, torch.float16)]:
    torch.manual_seed(N)
    q = torch.randn(B, Hq, N, d, device="cuda", dtype=dt)
    k = torch.randn(B, Hkv, N, d, device="cuda", dtype=dt)
    v = torch.randn(B, Hkv, N, d, device="cuda", dtype=dt)
    out = attn(q, k, v)
    kr = k.double().repeat_interleave(Hq // Hkv, 1)
    vr = v.double().repeat_interleave(Hq // Hkv, 1)
    s = q.double() @ kr.transpose(-1, -2) / d ** 0.5
    i = torch.arange(N, device="cuda")
    s = s + slopes.view(1, -1, 1, 1) * (i.view(1, -1) - i.view(-1, 1))
    s = s.masked_fill(i.view(-1, 1) < i.view(1, -1), float("-inf"))
    ref = torch.softmax(s, -1) @ vr
    err = ((out.double() - ref).norm() / ref.norm()).item()
    ok = err < 1e-2
    bad += not ok
    print(f"alibi_traced B{B} H{Hq}/{Hkv} N{N} d{d} {str(dt)[6:]}: rel err {err:.2e} {'ok' if ok else 'FAIL'}")
sys.exit(1 if bad else 0)
