#!/usr/bin/env python3
"""The GPU half of make.py's experiment: ab.py OUT [entry ...]. For each entry make.py built:
  - shapes gqa (Nq 777, Nkv 1024, d 64, 8 query heads on 2: a tile a block) and multi (B 4, Nq 1500,
    Nkv 1900, d 128, 8 on 2: about three tiles a block): both libraries against the entry's float64
    reference, bf16 and fp16 (check_catalogue.py's tolerances), and the persistent output and LSE against the
    unpatched one's (bitwise);
  - bench shape (B 4, H 16, N 4096, d 128, bf16): the outputs compared bitwise, then per-call times of the two
    libraries interleaved (best of 3 medians) and torch.compile(flex_attention)'s in the same run.
One line per check and a table at the end."""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[4]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tools" / "gpu")]
import torch  # noqa: E402
import check_catalogue as cc  # noqa: E402
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from make import SHAPES  # noqa: E402
from cuir import catalogue  # noqa: E402
from timing import median_ms  # noqa: E402

LIBS = ("orig", "persistent")


def check(entry, where, tag):
    B, Hq, Hkv, Nq, Nkv, D = SHAPES[tag]
    tensors = {n: t.cuda() for n, t in entry.make(B, Hq, Nq, Nkv, "cpu").items()}
    cpu_tensors = {n: t.cpu() for n, t in tensors.items()}
    calls = {lib: cc._kernel_call(where / f"{lib}.so", entry, tensors) for lib in LIBS}
    ok = True
    for dtype, name in ((torch.bfloat16, "bf16"), (torch.float16, "fp16")):
        q, k, v = cc._inputs(B, Hq, Hkv, Nq, Nkv, D, dtype, seed=7)
        ref = entry.reference(q.cpu(), k.cpu(), v.cpu(), D ** -0.5, cpu_tensors)
        ref, ref_lse = ref if isinstance(ref, tuple) else (ref, None)
        outs = {}
        for lib in LIBS:
            bm = calls[lib].block_mask(q, k)
            out, lse = calls[lib](q, k, v, True, bm)
            outs[lib] = (out, lse)
            good, errs = cc._compare(out, ref, lse, ref_lse, cc.TOLERANCE[name])
            ok &= good
            print(f"check {entry.name} {tag} {name} {lib}: {'ok' if good else 'FAIL'} {errs}", flush=True)
        same = torch.equal(outs["orig"][0], outs["persistent"][0]) and torch.equal(outs["orig"][1], outs["persistent"][1])
        ok &= same
        print(f"check {entry.name} {tag} {name} persistent == orig bitwise: {same}", flush=True)
    return ok


def bench(entry, where):
    B, Hq, Hkv, Nq, Nkv, D = SHAPES["bench"]
    tensors = {n: t.cuda() for n, t in entry.make(B, Hq, Nq, Nkv, "cpu").items()}
    calls = {lib: cc._kernel_call(where / f"{lib}.so", entry, tensors) for lib in LIBS}
    q, k, v = cc._inputs(B, Hq, Hkv, Nq, Nkv, D, torch.bfloat16, seed=1)
    bm = calls["orig"].block_mask(q, k)
    outs = {lib: calls[lib](q, k, v, False, bm) for lib in LIBS}
    same = torch.equal(outs["orig"], outs["persistent"])
    print(f"check {entry.name} bench persistent == orig bitwise: {same}", flush=True)
    times = {lib: [] for lib in LIBS}
    for _ in range(3):
        for lib in LIBS:
            times[lib].append(median_ms(lambda: calls[lib](q, k, v, False, bm)))
    flex = cc._flex_time(entry, tensors, q, k, v)["flex_ms"]
    return same, {lib: min(t) for lib, t in times.items()}, flex


def main(out, names):
    names = names or sorted(p.name for p in out.iterdir() if (p / "bench" / "persistent.so").exists())
    rows, ok = [], True
    for name in names:
        entry = catalogue.get(name)
        for tag in ("gqa", "multi"):
            ok &= check(entry, out / name / tag, tag)
        same, t, flex = bench(entry, out / name / "bench")
        ok &= same
        rows.append((name, t["orig"], t["persistent"], flex))
    print(f"\n{torch.cuda.get_device_name()}, bench shape {SHAPES['bench']}, bf16, ms per call (best of 3 medians)")
    print("| entry | as lowered | persistent | persistent / lowered | FlexAttention | Flex / lowered | Flex / persistent |")
    print("|---|---|---|---|---|---|---|")
    for name, o, p, f in rows:
        print(f"| {name} | {o:.3f} | {p:.3f} | {o / p:.3f}x | {f:.3f} | {f / o:.2f} | {f / p:.2f} |")
    print("all checks passed" if ok else "SOME CHECKS FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1]), sys.argv[2:]))
