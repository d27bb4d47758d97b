#!/usr/bin/env python3
"""Block sparsity on the GPU: CuIR's static splits and runtime block masks against FlexAttention, in one run.

For each mask, at N = 2k and 8k (16k tokens: B = 16384 // N), bf16, d = 128, the three model configurations:
  - CuIR: the block mask computed once (its time reported apart: `classify`), then the attention with it;
  - FlexAttention: create_block_mask(..., _compile=True) (its time reported apart), then
    torch.compile(flex_attention) with it;
  - on sm80, also the same variant built with --cuir-split-full-partial=block-mask=dense (every tile visited,
    masked), and the fraction of tiles the block mask skips.
Masks: packed documents (random lengths 128-2048, a fresh draw each run), global tokens + a sliding window,
the DESIGN section 8 five, and equivalent spellings traced from Python (a window, documents, causal) next to
the built-in they mean. Checks come first: every (mask, shape) output against a float64 reference at a ragged
and a GQA shape. With --spellings R, each traced spelling and its built-in are also timed interleaved (R rounds,
the order alternating), for the "within 3%" comparison that separate timings cannot resolve.

Two modes (the GPU machine has no cuir-opt):
  --stage DIR   (here) build the libraries into DIR/<kernel>/<name>[-dense]/ and write DIR/stage.json
  --run DIR     (GPU) check, time, print the table, write --json
Usage: PYTHONPATH=python /usr/bin/python3 tools/gpu/bench_block_sparse.py --stage build/sparse --kernels sm90,sm80
       PYTHONPATH=python python3 tools/gpu/bench_block_sparse.py --run build/sparse --json out.json
       PYTHONPATH=python python3 tools/gpu/bench_block_sparse.py --run build/sparse --no-check --no-bench --spellings 8
       PYTHONPATH=python python3 tools/gpu/bench_block_sparse.py --run build/sparse-new --ab build/sparse-old
With --ab OTHER, each library is timed against the one of its name staged in OTHER (e.g. from the tree before
a change), CuIR alone, interleaved over --rounds rounds; the outputs are compared first.
"""
import argparse
import importlib
import json
import math
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tools" / "gpu"))
from timing import loop_ms, median_ms  # noqa: E402
from variant_defs import doc_ids  # noqa: E402

ARCHS = {"sm80": "sm_90", "sm90": "sm_90a"}  # the H200 runs both: sm_80 code compiled for sm_90
CONFIGS = {"llama2-7b": (32, 32), "qwen2.5-72b": (64, 8), "llama3.1-405b": (128, 8)}
TOKENS, D = 16384, 128
WINDOW, CAP, GLOBAL = 1024, 50.0, 64

# Built-ins: name -> (spec, the variant_defs name whose mods and parameters it takes).
BUILTINS = {
    "documents": ("document", "document"),
    "global_window": ("global-window", "global_window"),
    "causal": ("causal", "causal"),
    "prefixlm": ("prefixlm", "prefixlm"),
    "softcap_causal": ("softcap,causal", "softcap_causal"),
    "alibi_causal": ("alibi,causal", "alibi_causal"),
    "window": ("window", "window"),
    "softcap_window": ("softcap,window", None),
}
FIVE = ("causal", "prefixlm", "softcap_causal", "alibi_causal", "window")
# Traced spellings and the built-in each means.
TRACED = {"window_traced": "softcap_window", "documents_traced": "documents", "causal_traced": "causal"}


def traced_mods(name, doc=None):
    """(score_mod, mask_mod) of a traced spelling, FlexAttention style (q aligned with kv: Nq = Nkv)."""
    import torch
    if name == "window_traced":
        return (lambda s, b, h, q, kv: CAP * torch.tanh(s / CAP),
                lambda b, h, q, kv: (q >= kv) & (q - kv < WINDOW))
    if name == "documents_traced":
        return None, lambda b, h, q, kv: doc[b, q] == doc[b, kv]
    if name == "causal_traced":
        return None, lambda b, h, q, kv: ~(kv > q)
    raise KeyError(name)


def builtin_mods(name, B, H, N, doc=None):
    """(score_mod, mask_mod, CuIR parameters) of a built-in at (B, H, N, N)."""
    import torch
    import variant_defs as vd
    if name == "softcap_window":
        score_mod, _, _, _ = vd.make("softcap_causal", B, H, N, N)
        return (score_mod, lambda b, h, q, kv: (kv <= q) & (kv >= q - (WINDOW - 1)),
                {"softcap": CAP, "window_left": WINDOW - 1, "window_right": 0})
    score_mod, mask_mod, _, params = vd.make(BUILTINS[name][1], B, H, N, N)
    if name == "documents":
        params["doc_ids"] = doc.reshape(-1).contiguous()
        mask_mod = lambda b, h, q, kv: doc[b, q] == doc[b, kv]  # noqa: E731
    has_score = name in ("softcap_causal", "alibi_causal")
    return (score_mod if has_score else None), mask_mod, params


# ---------------------------------------------------------------------------------------------------------
# Staging (CPU)
# ---------------------------------------------------------------------------------------------------------

def _lower(kernel, spec, out_cu, dense):
    comp = importlib.import_module("cuir.compile")
    return comp.lower_command(kernel, spec, out_cu, (ARCHS[kernel],), block_mask="dense" if dense else "auto")


def stage(out, kernels, jobs, names=None):
    import concurrent.futures
    import torch
    from cuir import cache
    comp = importlib.import_module("cuir.compile")
    builds = []  # (kernel, name, spec, dense)
    for kernel in kernels:
        for name, (spec, _) in BUILTINS.items():
            if names and name not in names:
                continue
            builds.append((kernel, name, spec, False))
            if kernel == "sm80":
                builds.append((kernel, name, spec, True))
        for name in TRACED:
            if names and name not in names:
                continue
            for N in (2048, 8192):
                B = TOKENS // N
                score_mod, mask_mod = traced_mods(name, doc_ids(B, N))
                text, _ = comp.trace(score_mod, mask_mod, "softmax", name, defaults=False)
                where = out / kernel / f"{name}-{N}"
                where.mkdir(parents=True, exist_ok=True)
                (where / "variant.mlir").write_text(text)
                builds.append((kernel, f"{name}-{N}", str(where / "variant.mlir"), False))

    def build(job):
        kernel, name, spec, dense = job
        where = out / kernel / (name + ("-dense" if dense else ""))
        where.mkdir(parents=True, exist_ok=True)
        stem = name.split("-")[0] if not spec.endswith(".mlir") else name.rsplit("-", 1)[0]
        cache.run_with_progress(_lower(kernel, spec, where / f"{stem}.cu", dense), f"{name} on {kernel}")
        return {"kernel": kernel, "name": name, "dense": dense,
                "library": str((where / f"lib{stem}.so").relative_to(out))}

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        staged = list(pool.map(build, builds))
    for p in out.rglob("*"):
        if p.is_file() and (p.suffix in (".ptx", ".cubin", ".o", ".cu", ".diff") or p.name.endswith(".log")):
            p.unlink()
    (out / "stage.json").write_text(json.dumps({"staged": staged}, indent=1))
    print(f"staged {len(staged)} libraries into {out}")
    return 0


# ---------------------------------------------------------------------------------------------------------
# Run (GPU)
# ---------------------------------------------------------------------------------------------------------

def _reference(q, k, v, score_mod, mask_mod):
    """float64 attention with the mods (Nq = Nkv alignment), rows that see nothing give 0."""
    import torch
    B, Hq, N, d = q.shape
    rep = Hq // k.shape[1]
    kk, vv = k.double().repeat_interleave(rep, 1), v.double().repeat_interleave(rep, 1)
    s = (q.double() @ kk.transpose(-1, -2)) / math.sqrt(d)
    idx = lambda n, dim: torch.arange(n, device=q.device).view([-1 if i == dim else 1 for i in range(4)])  # noqa
    b, h, qi, ki = idx(B, 0), idx(Hq, 1), idx(N, 2), idx(k.shape[2], 3)
    if score_mod is not None:
        s = score_mod(s, b, h, qi, ki)
    m = mask_mod(b, h, qi, ki).expand_as(s)
    s = s.masked_fill(~m, float("-inf"))
    p = torch.softmax(s, -1).nan_to_num(0.0)
    return p @ vv


class Library:
    """A staged library and how to call it: built-in parameters, or a traced variant's captured tensors."""

    def __init__(self, path, traced):
        comp = importlib.import_module("cuir.compile")
        self.comp, self.kern, self.traced = comp, comp.load_once(str(path)), traced

    def params(self, name, B, H, N, doc, device):
        if not self.traced:
            return builtin_mods(name, B, H, N, doc)[2]
        score_mod, mask_mod = traced_mods(name, doc)
        values = self.comp.trace(score_mod, mask_mod, "softmax", name, defaults=False)[1]
        return {n: self.comp.tensor_for(self.kern, n, t, device) for n, t in values.items()}

    def block_mask(self, B, H, N, params):
        return self.kern.block_mask(B, H, N, N, head_dim=D, **params)

    def __call__(self, q, k, v, params, block_mask=None):
        kw = {"block_mask": block_mask} if block_mask is not None else {}
        return self.kern(q, k, v, layout="bhnd", **params, **kw)


def _libraries(root, kernel):
    staged = json.loads((root / "stage.json").read_text())["staged"]
    libs = {}
    for s in staged:
        if s["kernel"] == kernel:
            libs[(s["name"], s["dense"])] = root / s["library"]
    return libs


def _mods_for(name, B, H, N, doc):
    if name.rsplit("-", 1)[0] in TRACED:
        score_mod, mask_mod = traced_mods(name.rsplit("-", 1)[0], doc)
        return score_mod, mask_mod
    score_mod, mask_mod, _ = builtin_mods(name, B, H, N, doc)
    return score_mod, mask_mod


def check(root, kernel, only=None):
    """Each library against float64 at a ragged-ish shape (Nq = Nkv = 1000, not a tile multiple) and a GQA
    one, bf16."""
    import torch
    rows, bad = [], 0
    libs = _libraries(root, kernel)
    for (name, dense), path in sorted(libs.items()):
        base = name.rsplit("-", 1)[0]
        if (base in TRACED and not name.endswith("-2048")) or (only and base not in only):
            continue
        for (B, Hq, Hkv, N) in ((2, 4, 4, 1000), (2, 8, 2, 777)):
            if base in TRACED:
                B, N = TOKENS // 2048, 2048  # a traced variant's captured tensors have the staged shape
            g = torch.Generator(device="cuda").manual_seed(1)
            q, k, v = (torch.randn(B, H, N, D, generator=g, device="cuda").to(torch.bfloat16)
                       for H in (Hq, Hkv, Hkv))
            doc = doc_ids(B, N, device="cuda")
            lib = Library(path, base in TRACED)
            params = lib.params(base if base in TRACED else name, B, Hq, N, doc, "cuda")
            out = lib(q, k, v, params)
            score_mod, mask_mod = _mods_for(name, B, Hq, N, doc)
            ref = _reference(q, k, v, score_mod, mask_mod)
            err = ((out.double() - ref).norm() / ref.norm().clamp_min(1e-30)).item()
            ok = bool(torch.isfinite(out).all()) and err < 1e-2
            bad += not ok
            rows.append({"kernel": kernel, "name": name, "dense": dense, "shape": f"B{B} H{Hq}/{Hkv} N{N}",
                         "rel_err": err, "ok": ok})
            print(f"check {kernel} {name}{' dense' if dense else ''} B{B} H{Hq}/{Hkv} N{N}: {err:.2e} "
                  f"{'ok' if ok else 'FAIL'}", flush=True)
            if base in TRACED:
                break
    return rows, bad


def check_flex_block_mask(root, kernel):
    """The documents library walking FlexAttention's own BlockMask (create_block_mask at the kernel's tiles,
    converted as cuir.flex_attention does, its q_order computed by torch) against float64, and the converted
    lists against the library's classification."""
    import torch
    from torch.nn.attention.flex_attention import create_block_mask
    from cuir import block_mask as bml
    path = _libraries(root, kernel).get(("documents", False))
    if path is None:
        return [], 0
    lib = Library(path, False)
    B, Hq, Hkv, N = 2, 8, 2, 2048
    info = bml.tiles_for(lib.kern.block_mask_info, D)
    g = torch.Generator(device="cuda").manual_seed(2)
    q, k, v = (torch.randn(B, H, N, D, generator=g, device="cuda").to(torch.bfloat16) for H in (Hq, Hkv, Hkv))
    doc = doc_ids(B, N, device="cuda")
    params = lib.params("documents", B, Hq, N, doc, "cuda")
    _, mask_mod = _mods_for("documents", B, Hq, N, doc)
    fbm = create_block_mask(mask_mod, B, None, N, N, device="cuda", BLOCK_SIZE=(info["block_m"], info["block_n"]))
    own, why = bml.from_flex(fbm, info, B, Hq, N, N, q.device)
    if own is None:
        print(f"check {kernel} flex BlockMask: refused ({why}) FAIL", flush=True)
        return [{"kernel": kernel, "name": "documents flex BlockMask", "ok": False, "why": why}], 1
    mine = lib.block_mask(B, Hq, N, params)
    same = all(torch.equal(getattr(own, n), getattr(mine, n)) for n in ("kv_num_blocks", "full_kv_num_blocks",
                                                                          "q_order"))
    out = lib(q, k, v, params, block_mask=own)
    ref = _reference(q, k, v, None, mask_mod)
    err = ((out.double() - ref).norm() / ref.norm()).item()
    ok = bool(torch.isfinite(out).all()) and err < 1e-2
    print(f"check {kernel} documents with FlexAttention's BlockMask B{B} H{Hq}/{Hkv} N{N}: {err:.2e}, counts and "
          f"q_order {'equal' if same else 'DIFFER from'} the library's: {'ok' if ok else 'FAIL'}", flush=True)
    return [{"kernel": kernel, "name": "documents flex BlockMask", "shape": f"B{B} H{Hq}/{Hkv} N{N}",
             "rel_err": err, "lists_equal": same, "ok": ok}], int(not ok)


def bench(root, kernel, ns, configs, names=None):
    import torch
    from torch import _dynamo
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    _dynamo.config.cache_size_limit = 4096
    _dynamo.config.recompile_limit = 4096
    flex = torch.compile(flex_attention, dynamic=False)
    libs = _libraries(root, kernel)
    rows = []
    for cname, Hq, N, B, q, k, v, doc in _problems(configs, ns):
        for name in list(BUILTINS) + [f"{t}-{N}" for t in TRACED]:
            base = name.rsplit("-", 1)[0]
            if (name, False) not in libs or (names and not {name, base} & set(names)):
                continue
            rows.append(bench_one(libs, name, base, kernel, cname, B, Hq, N, doc, q, k, v, flex, create_block_mask))
            _print_row(rows[-1])
    return rows


def _problems(configs, ns):
    """Per model configuration and N: (config, Hq, N, B, q, k, v, document ids), fresh random bf16 inputs and a
    fresh draw of documents (16k tokens: at most about 1 GB, two problems' worth alive at a time)."""
    import torch
    for cname in configs:
        Hq, Hkv = CONFIGS[cname]
        for N in ns:
            B = TOKENS // N
            q, k, v = (torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16) for H in (Hq, Hkv, Hkv))
            yield cname, Hq, N, B, q, k, v, doc_ids(B, N, device="cuda")
            del q, k, v
            torch.cuda.empty_cache()


def _print_row(row):
    print(json.dumps({a: (round(b, 4) if isinstance(b, float) else b) for a, b in row.items()}), flush=True)


def bench_one(libs, name, base, kernel, cname, B, Hq, N, doc, q, k, v, flex, create_block_mask):
    import torch
    traced = base in TRACED
    lib = Library(libs[(name, False)], traced)
    params = lib.params(base if traced else name, B, Hq, N, doc, "cuda")
    score_mod, mask_mod = _mods_for(name, B, Hq, N, doc)
    bm = lib.block_mask(B, Hq, N, params) if lib.kern.block_mask_info else None
    row = {"kernel": kernel, "config": cname, "N": N, "B": B, "mask": name, "means": TRACED.get(base)}
    dense = mask_mod(torch.arange(B, device="cuda").view(B, 1, 1, 1), torch.zeros(1, 1, 1, 1, device="cuda",
                     dtype=torch.long), torch.arange(N, device="cuda").view(1, 1, N, 1),
                     torch.arange(N, device="cuda").view(1, 1, 1, N))
    pairs = dense.expand(B, 1, N, N).sum().item() / B
    tf = lambda ms: 4 * B * Hq * pairs * D / ms / 1e9  # noqa: E731
    if bm is not None:
        row["classify_ms"] = median_ms(lambda: lib.block_mask(B, Hq, N, params), reps=30)
        dense_tiles = bm.to_dense()
        row["visited_tiles"] = (dense_tiles > 0).float().mean().item()
    row["cuir_ms"] = median_ms(lambda: lib(q, k, v, params, bm), reps=30)
    row["cuir_tflops"] = tf(row["cuir_ms"])
    row["cuir_loop_ms"] = loop_ms(lambda: lib(q, k, v, params, bm))  # host overhead hidden (timing.py)
    if (name, True) in libs:
        dlib = Library(libs[(name, True)], traced)
        row["dense_ms"] = median_ms(lambda: dlib(q, k, v, params), reps=30)
        row["vs_dense"] = row["dense_ms"] / row["cuir_ms"]
        row["dense_loop_ms"] = loop_ms(lambda: dlib(q, k, v, params))
        row["vs_dense_loop"] = row["dense_loop_ms"] / row["cuir_loop_ms"]
    try:
        fbm = create_block_mask(mask_mod, B if "doc" in name else None, None, N, N, device="cuda", _compile=True)
        t0 = time.perf_counter()
        for _ in range(5):
            create_block_mask(mask_mod, B if "doc" in name else None, None, N, N, device="cuda", _compile=True)
        torch.cuda.synchronize()
        row["create_block_mask_ms"] = (time.perf_counter() - t0) / 5 * 1e3
        row["flex_ms"] = median_ms(lambda: flex(q, k, v, score_mod=score_mod, block_mask=fbm, enable_gqa=Hq != k.shape[1]), reps=30)
        row["flex_tflops"] = tf(row["flex_ms"])
        row["vs_flex"] = row["flex_ms"] / row["cuir_ms"]
        row["flex_loop_ms"] = loop_ms(lambda: flex(q, k, v, score_mod=score_mod, block_mask=fbm,
                                                   enable_gqa=Hq != k.shape[1]))
        row["vs_flex_loop"] = row["flex_loop_ms"] / row["cuir_loop_ms"]
    except Exception as e:  # reported, not hidden
        row["flex_error"] = f"{type(e).__name__}: {str(e)[:160]}"
    return row


def _alternating(calls, rounds):
    """Two calls timed in `rounds` rounds of a median of 10 each, the order alternating (A B, B A, ...) so that
    clock and thermal drift fall on both: each one's median over the rounds, and the sorted per-round ratios
    of the second's time to the first's."""
    times = ([], [])
    for r in range(rounds):
        for i in ((0, 1) if r % 2 == 0 else (1, 0)):
            times[i].append(median_ms(calls[i], warmup=3, reps=10))
    med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    return med(times[0]), med(times[1]), sorted(b / a for a, b in zip(*times))


def spellings(root, kernel, ns, configs, rounds):
    """Each traced spelling against the built-in it means, timed interleaved: `rounds` rounds of a median of 10
    calls each, the order alternating (A B, B A, ...) so that clock and thermal drift fall on both; the ratio
    of the medians of the rounds (traced time / built-in time: 1.03 = 3% slower) and its round-to-round range."""
    libs = _libraries(root, kernel)
    rows = []
    for cname, Hq, N, B, q, k, v, doc in _problems(configs, ns):
        for traced, means in TRACED.items():
            name = f"{traced}-{N}"
            if (name, False) not in libs or (means, False) not in libs:
                continue
            calls = []
            for lib_name, base, is_traced in ((means, means, False), (name, traced, True)):
                lib = Library(libs[(lib_name, False)], is_traced)
                params = lib.params(base, B, Hq, N, doc, "cuda")
                bm = lib.block_mask(B, Hq, N, params) if lib.kern.block_mask_info else None
                calls.append(lambda lib=lib, params=params, bm=bm: lib(q, k, v, params, bm))
            builtin_ms, traced_ms, ratios = _alternating(calls, rounds)
            rows.append({"kernel": kernel, "config": cname, "N": N, "traced": traced, "means": means,
                         "builtin_ms": builtin_ms, "traced_ms": traced_ms, "traced / builtin": traced_ms / builtin_ms,
                         "round ratio min": ratios[0], "round ratio max": ratios[-1], "rounds": rounds})
            _print_row(rows[-1])
    return rows


def ab(root, other, kernel, ns, configs, names, rounds):
    """Each library of `root` against the library of the same name staged in `other` (two trees' builds),
    CuIR alone: every round times both once per call (median of 10), in an order that alternates; the outputs
    are compared first. Per problem, each build's median over the rounds and the range of the per-round ratio
    of times other / root (above 1: root's build is faster)."""
    mine, theirs = _libraries(root, kernel), _libraries(other, kernel)
    rows = []
    for cname, Hq, N, B, q, k, v, doc in _problems(configs, ns):
        for (name, dense), path in sorted(mine.items()):
            if dense or (name, False) not in theirs or (names and name not in names) or \
                    name.rsplit("-", 1)[0] in TRACED:
                continue
            calls, outs = [], []
            for lib_path in (path, theirs[(name, False)]):
                lib = Library(lib_path, False)
                params = lib.params(name, B, Hq, N, doc, "cuda")
                bm = lib.block_mask(B, Hq, N, params) if lib.kern.block_mask_info else None
                calls.append(lambda lib=lib, params=params, bm=bm: lib(q, k, v, params, bm))
                outs.append(calls[-1]().float())
            diff = (outs[0] - outs[1]).abs().max().item()
            ms, other_ms, ratios = _alternating(calls, rounds)
            rows.append({"kernel": kernel, "config": cname, "N": N, "mask": name, "ms": ms,
                         "other_ms": other_ms, "other / this": other_ms / ms,
                         "ratio min": ratios[0], "ratio max": ratios[-1], "max |diff|": diff, "rounds": rounds})
            _print_row(rows[-1])
            del outs
    return rows


def ab_table(rows, root, other):
    lines = [f"this = {root}, other = {other}",
             "| kernel | config | N | mask | this ms | other ms | other / this | rounds' range | max abs diff |",
             "|" + "---|" * 9]
    for r in rows:
        lines.append(f"| {r['kernel']} | {r['config']} | {r['N']} | {r['mask']} | {r['ms']:.3f} | "
                     f"{r['other_ms']:.3f} | {r['other / this']:.3f} | {r['ratio min']:.3f}-{r['ratio max']:.3f} | "
                     f"{r['max |diff|']:.2e} |")
    return "\n".join(lines)


def spelling_table(rows):
    lines = ["| kernel | config | N | traced | built-in | built-in ms | traced ms | traced / built-in |"
             " rounds' range |", "|" + "---|" * 9]
    for r in rows:
        lines.append(f"| {r['kernel']} | {r['config']} | {r['N']} | {r['traced']} | {r['means']} | "
                     f"{r['builtin_ms']:.3f} | {r['traced_ms']:.3f} | {r['traced / builtin']:.3f} | "
                     f"{r['round ratio min']:.3f}-{r['round ratio max']:.3f} |")
    within = sum(abs(r["traced / builtin"] - 1) <= 0.03 for r in rows)
    lines.append(f"\n{within} of {len(rows)} within 3%")
    return "\n".join(lines)


def table(rows):
    lines = ["| kernel | config | N | mask | CuIR TF/s | Flex TF/s | CuIR/Flex | CuIR/Flex, back to back | classify ms"
             " | create_block_mask ms | dense/CuIR | dense/CuIR, back to back |", "|" + "---|" * 12]
    for r in rows:
        f = lambda key, fmt="{:.2f}": fmt.format(r[key]) if r.get(key) is not None else "-"  # noqa: E731
        lines.append(f"| {r['kernel']} | {r['config']} | {r['N']} | {r['mask']} | {f('cuir_tflops', '{:.0f}')} | "
                     f"{f('flex_tflops', '{:.0f}')} | {f('vs_flex')} | {f('vs_flex_loop')} | {f('classify_ms', '{:.3f}')} | "
                     f"{f('create_block_mask_ms', '{:.3f}')} | {f('vs_dense')} | {f('vs_dense_loop')} |")
    return "\n".join(lines)


def run(root, args):
    import torch
    print(torch.cuda.get_device_name(), torch.__version__, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
          flush=True)
    result = {"checks": [], "bench": []}
    bad = 0
    if args.ab:
        for kernel in args.kernels.split(","):
            result["ab"] = result.get("ab", []) + ab(root, args.ab, kernel, args.n, args.configs.split(","),
                                                     args.names and args.names.split(","), args.rounds)
        print(ab_table(result["ab"], root, args.ab))
        if args.json:
            pathlib.Path(args.json).write_text(json.dumps(result, indent=1))
        return 0
    for kernel in args.kernels.split(","):
        if not args.no_check:
            rows, b = check(root, kernel, args.names and args.names.split(","))
            flex_rows, fb = ([], 0) if args.no_flex_check else check_flex_block_mask(root, kernel)
            result["checks"] += rows + flex_rows
            bad += b + fb
        if not args.no_bench:
            result["bench"] += bench(root, kernel, args.n, args.configs.split(","), args.names and args.names.split(","))
        if args.spellings:
            result["spellings"] = result.get("spellings", []) + spellings(
                root, kernel, args.n, args.configs.split(","), args.spellings)
    if result["bench"]:
        print(table(result["bench"]))
    if result.get("spellings"):
        print(spelling_table(result["spellings"]))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(result, indent=1))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stage", type=pathlib.Path)
    ap.add_argument("--run", type=pathlib.Path)
    ap.add_argument("--kernels", default="sm90,sm80")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--names", help="only these masks (comma-separated): staged, checked, timed")
    ap.add_argument("--n", type=int, nargs="+", default=[2048, 8192])
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--no-bench", action="store_true")
    ap.add_argument("--no-flex-check", action="store_true",
                    help="skip the check through FlexAttention's BlockMask (its compile is slow under compute-sanitizer)")
    ap.add_argument("--spellings", type=int, default=0, metavar="ROUNDS",
                    help="--run: also time each traced spelling against its built-in, interleaved, ROUNDS rounds")
    ap.add_argument("--ab", type=pathlib.Path, metavar="OTHER",
                    help="time the libraries of --run DIR against those staged in OTHER, interleaved (no checks, "
                         "no FlexAttention)")
    ap.add_argument("--rounds", type=int, default=5, help="rounds of --ab")
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.stage:
        return stage(args.stage, args.kernels.split(","), args.jobs, args.names and args.names.split(","))
    if args.run:
        return run(args.run, args)
    ap.error("give --stage DIR or --run DIR")


if __name__ == "__main__":
    sys.exit(main())
