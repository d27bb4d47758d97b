#!/usr/bin/env python3
"""Runtime block masks on the GPU: the classification's lists against a torch computation of the mask (exact),
attention outputs with those lists against float64 (ragged and GQA shapes, bf16 and fp16, the lists given and
computed per call), the entry points' argument checks, and the classification's own time (CUDA events) against
FlexAttention's create_block_mask(..., _compile=True) for the same mask, in one table.

Cases: the catalogue's masks (python/cuir/catalogue, families mask and composition), documents_random
(packed documents of random lengths 128-2048, a fresh draw at each --run: the library takes the ids as a
parameter), and builtin_document: the built-in document variant given a block mask by hand
(test/Passes/lower/Inputs/add_block_mask.py), staged without the transform's option, so that the
classification is checked and timed even where the kernels do not walk the lists yet. Two modes, as tools/gpu/check_catalogue.py (the GPU machine has neither clang nor cuir-opt):
  --stage DIR  (here): trace each case at each shape, lower it with a runtime block mask
               (--cuir-split-full-partial=block-mask=<--block-mask>, default runtime: also the masks the
               static analysis splits) into DIR/<kernel>/<case>/<shape>/, write DIR/stage.json.
  --run DIR    (the GPU machine): load the staged libraries, check, time, print the table, write
               DIR/block_mask.json (or --json) and, with --md, the markdown table. --memcheck first runs the
               list and output checks under compute-sanitizer memcheck.
Usage: tools/gpu/check_block_mask.py --stage build/block_mask [case ...]
       PYTHONPATH=python python3 tools/gpu/check_block_mask.py --run build/block_mask [--memcheck] [case ...]
"""
import argparse
import ctypes
import json
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tools" / "gpu"))

# (B, Hq, Hkv, Nq, Nkv, D): ragged lengths (no multiple of any kernel's tiles) with Nq != Nkv, grouped-query
# heads, and the benchmark shapes (llama2-7b heads, B = 2, N = 2k and 8k).
SHAPES = {"ragged": (2, 4, 4, 1000, 1313, 128), "gqa": (2, 8, 2, 777, 1024, 64),
          "bench2k": (2, 32, 32, 2048, 2048, 128), "bench8k": (2, 32, 32, 8192, 8192, 128)}
CHECKS = ("ragged", "gqa")
ARCHS = {"sm80": ("sm_90",), "sm90": ("sm_90a",)}  # the H200 runs both: sm_80 code is compiled for sm_90


def _documents_random():
    """Packed documents of random lengths in [128, 2048] (FlexAttention's document mask), ids int32 [N]."""
    import torch
    from cuir.catalogue.entry import Entry
    from cuir.catalogue import masks

    def make(B, H, Nq, Nkv, device, seed=None):
        n = max(Nq, Nkv)
        g = torch.Generator().manual_seed(seed if seed is not None else int(time.time_ns() % 2 ** 31))
        lengths = []
        while sum(lengths) < n:
            lengths.append(int(torch.randint(128, 2049, (1,), generator=g)))
        ids = torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))[:n]
        return {"document_id": ids.to(torch.int32).to(device)}

    return Entry("documents_random", "mask", "packed documents, random lengths 128-2048 (fresh each run)",
                 lambda t: (None, masks.document_mods(t)), masks._ref_document,
                 lambda B, H, Nq, Nkv, device: make(B, H, Nq, Nkv, device))


# Cases staged without the split's block-mask option: a built-in variant's Target CuIR given a block mask by
# test/Passes/lower/Inputs/add_block_mask.py (the lists are classified, the kernel's loops stay dense), so that
# the classification is checked and timed apart from the kernels' walk of the lists. case -> (built-in, its mask).
HANDMADE = {"builtin_document": ("document", "document")}
# The kernels' tiles by head dim (kernels/sm80: BLOCK_N 64 at d = 128; kernels/sm90: 128 x 128).
TILES = {"sm80": ("128:128x64", "64:128x128"), "sm90": ("128:128x128", "64:128x128")}


def _builtin_document():
    """The built-in document variant's mask, doc_ids[b * Nkv + q] == doc_ids[b * Nkv + kv] (int32 [B * Nkv],
    here a contiguous [B, Nkv] tensor: documents of random lengths 128-2048 in each batch row; needs
    Nq <= Nkv)."""
    import torch
    from cuir.catalogue.dense import attend, grids, scores
    from cuir.catalogue.entry import Entry

    def make(B, H, Nq, Nkv, device):
        g = torch.Generator().manual_seed(int(time.time_ns() % 2 ** 31))
        rows = []
        for _ in range(B):
            lengths = torch.randint(128, 2049, (Nkv // 128 + 1,), generator=g)
            rows.append(torch.repeat_interleave(torch.arange(len(lengths)), lengths)[:Nkv])
        return {"doc_ids": torch.stack(rows).to(torch.int32).to(device)}

    def mods(t):
        doc_ids = t["doc_ids"]

        def document(b, h, q_idx, kv_idx):
            return doc_ids[b, q_idx] == doc_ids[b, kv_idx]
        return None, document

    def reference(q, k, v, scale, t):
        b, _, qi, ki = grids(q.shape[0], q.shape[1], q.shape[2], k.shape[2])
        ids = t["doc_ids"].cpu().long()
        return attend(scores(q, k, scale), v, ids[b, qi] == ids[b, ki])

    return Entry("builtin_document", "mask", "the built-in document variant (doc_ids per batch row), random "
                 "lengths 128-2048", mods, reference, make)


def cases(names=()):
    from cuir import catalogue
    all_cases = {e.name: e for e in catalogue.entries() if e.family in ("mask", "composition")}
    all_cases["documents_random"] = _documents_random()
    all_cases["builtin_document"] = _builtin_document()
    all_cases = {n: e for n, e in all_cases.items() if e.mods({n2: t for n2, t in
                                                               e.make(2, 4, 256, 256, "cpu").items()})[1]}
    if names:
        unknown = [n for n in names if n not in all_cases]
        if unknown:
            raise SystemExit(f"unknown cases {unknown}; known: {', '.join(all_cases)}")
        return {n: all_cases[n] for n in names}
    return all_cases


# ---- staging (CPU) ----------------------------------------------------------------------------------------

def stage(out, names, kernels, opt, mode, workers):
    import concurrent.futures
    import importlib
    from cuir import cache
    from cuir.catalogue.check import first_error, trace_entry
    comp = importlib.import_module("cuir.compile")
    os.environ.setdefault("CUIR_OPT", opt)
    out.mkdir(parents=True, exist_ok=True)
    jobs, failed = [], []
    for name, entry in cases(names).items():
        for kernel in kernels:
            for tag, (B, Hq, Hkv, Nq, Nkv, D) in SHAPES.items():
                try:
                    text, _ = trace_entry(entry, B, Hq, Nq, Nkv, defaults=False)
                except Exception as e:  # reported; the other cases are staged
                    failed.append({"case": name, "kernel": kernel, "shape": tag, "error": first_error(str(e))})
                    break
                # a HANDMADE case's library does not depend on the shape: built once per kernel
                where = out / kernel / name / ("any" if name in HANDMADE else tag)
                jobs.append((name, kernel, tag, where, text))

    def build(job):
        name, kernel, tag, where, text = job
        where.mkdir(parents=True, exist_ok=True)
        if name in HANDMADE:
            return build_handmade(name, kernel, where, opt)
        (where / "variant.mlir").write_text(text)
        cmd = comp.lower_command(kernel, where / "variant.mlir", where / f"{name}.cu", ARCHS[kernel])
        cmd = [f"{c}=block-mask={mode}" if c == "--cuir-split-full-partial" else c for c in cmd]
        cache.run_with_progress(cmd, f"{name} on {kernel} ({tag}, block-mask={mode})")

    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        by_dir = {}
        for job in jobs:
            if job[3] not in by_dir:
                by_dir[job[3]] = pool.submit(build, job)
        futures = [(job, by_dir[job[3]]) for job in jobs]
    staged = []
    for job, future in futures:
        name, kernel, tag, where, _ = job
        if future.exception() is not None:
            failed.append({"case": name, "kernel": kernel, "shape": tag,
                           "error": first_error(str(future.exception())) or type(future.exception()).__name__})
            continue
        staged.append({"case": name, "kernel": kernel, "shape": tag,
                       "library": str((where / f"lib{name}.so").relative_to(out))})
    for p in out.rglob("*"):  # the GPU machine needs the libraries and manifests only
        if p.is_file() and (p.suffix in (".ptx", ".cubin", ".o") or p.name.endswith(".ptxas.log")):
            p.unlink()
    (out / "stage.json").write_text(json.dumps({"shapes": SHAPES, "block_mask": mode, "staged": staged,
                                                "failed": failed}, indent=1))
    print(f"staged {len(staged)} libraries into {out}, {len(failed)} failed")
    for f in failed:
        print(f"FAIL {f['case']} {f['kernel']} {f['shape']}: {f['error']}", file=sys.stderr)
    return 0 if not failed else 1


def build_handmade(name, kernel, where, opt):
    """A HANDMADE case: the built-in's Target CuIR, a block mask added, lowered and compiled."""
    import importlib
    comp = importlib.import_module("cuir.compile")
    builtin, mask = HANDMADE[name]
    source = comp.KERNELS[kernel]
    steps = [[opt, str(source), "--lift", f"--transfer={builtin}", "--lower=compile=false", "-o",
              str(where / "plain" / f"{name}.cu")],
             [sys.executable, str(ROOT / "test" / "Passes" / "lower" / "Inputs" / "add_block_mask.py"),
              str(where / "plain" / f"{name}.target.cuir.mlir"), str(where / "bm.mlir"), mask, *TILES[kernel]],
             [opt, str(where / "bm.mlir"), f"--lower=archs={','.join(ARCHS[kernel])} source-root={source.parent}",
              "-o", str(where / f"{name}.cu")]]
    for cmd in steps:
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd[:2])} failed:\n{r.stderr[-3000:]}")


# ---- the expected lists (torch, on the GPU) ---------------------------------------------------------------

def tile_classes(mask_mod, b, h, Nq, Nkv, bm, bn, device):
    """int32 [QB, KB]: 0 empty, 1 partial, 2 full, of the mask at batch b and head h (None: the mask reads
    neither; evaluated at 0), from the dense [Nq, Nkv] mask."""
    import torch
    q = torch.arange(Nq, device=device).view(Nq, 1)
    kv = torch.arange(Nkv, device=device).view(1, Nkv)
    bt, ht = (torch.tensor(x or 0, device=device) for x in (b, h))
    try:  # the mask_mod on broadcast coordinates, as torch ops
        visible = torch.as_tensor(mask_mod(bt, ht, q, kv), device=device).expand(Nq, Nkv).bool()
    except Exception:  # a mask_mod that needs scalar coordinates: FlexAttention's own (vmap) evaluation
        from torch.nn.attention.flex_attention import create_mask
        shifted = lambda b_, h_, q_, kv_: mask_mod(b_ + (b or 0), h_ + (h or 0), q_, kv_)  # noqa: E731
        visible = create_mask(shifted, 1, 1, Nq, Nkv, device=device)[0, 0]
    QB, KB = -(-Nq // bm), -(-Nkv // bn)
    padded = torch.zeros(QB * bm, KB * bn, dtype=torch.bool, device=device)
    padded[:Nq, :Nkv] = visible  # out of range: False, so a ragged tile is never all visible
    tiles = padded.view(QB, bm, KB, bn).permute(0, 2, 1, 3).reshape(QB, KB, -1)
    any_visible, full = tiles.any(-1), tiles.all(-1)
    return torch.where(any_visible, torch.where(full, 2, 1), 0).int()


def lists_of(classes):
    """The nine lists of a [B', H', QB, KB] class tensor, CuIR's order (descending; zeros after a count)."""
    import torch

    def compact(c, cls):  # rows of the last dimension, descending tile order
        n = c.shape[-1]
        order = torch.arange(n - 1, -1, -1, device=c.device)
        take = c[..., order] == cls
        counts = take.sum(-1).int()
        pos = torch.sort((~take).int(), dim=-1, stable=True).indices
        idx = order[pos].int()
        idx[torch.arange(n, device=c.device) >= counts.unsqueeze(-1)] = 0
        return counts, idx

    out = {}
    for prefix, c in (("kv", classes), ("q", classes.transpose(-1, -2))):
        out[f"{prefix}_num_blocks"], out[f"{prefix}_indices"] = compact(c, 1)
        out[f"full_{prefix}_num_blocks"], out[f"full_{prefix}_indices"] = compact(c, 2)
    # heavy-first: most listed tiles first, ties from the last query tile down
    qb = classes.shape[-2]
    key = (classes > 0).sum(-1).long() * qb + torch.arange(qb, device=classes.device)
    out["q_order"] = torch.sort(key, dim=-1, descending=True).indices.int()
    return out


def expected_classes(mask_mod, info, B, H, Nq, Nkv, device, broadcast_check):
    """[B', H', QB, KB] classes; with broadcast_check, also evaluated at every (b, h) and compared with the
    broadcast row (the depends the lowering derived must be right). Returns (classes, broadcast problem)."""
    import torch
    per_b, per_h = "batch" in info["depends"], "heads" in info["depends"]
    bm, bn = info["block_m"], info["block_n"]
    rows = [[tile_classes(mask_mod, b if per_b else None, h if per_h else None, Nq, Nkv, bm, bn, device)
             for h in range(H if per_h else 1)] for b in range(B if per_b else 1)]
    classes = torch.stack([torch.stack(r) for r in rows])
    problem = None
    if broadcast_check and not (per_b and per_h):
        for b in range(B):
            for h in range(H):
                got = tile_classes(mask_mod, b, h, Nq, Nkv, bm, bn, device)
                if not torch.equal(got, classes[b if per_b else 0, h if per_h else 0]):
                    problem = f"the mask at (b={b}, h={h}) differs from its broadcast row"
                    return classes, problem
    return classes, problem


def compare_lists(bm, want):
    import torch
    for name, t in want.items():
        got = getattr(bm, name)
        if tuple(got.shape) != tuple(t.shape):
            return f"{name}: shape {list(got.shape)}, expected {list(t.shape)}"
        if not torch.equal(got, t):
            where = (got != t).nonzero()[0].tolist()
            return f"{name}{where}: {got[tuple(where)].item()}, expected {t[tuple(where)].item()}"
    return None


# ---- the entry points ----------------------------------------------------------------------------------------

def _params_struct(kern, B, H, Nq, Nkv, D, params, device):
    p = kern.params_type()
    b = p.base
    b.batch, b.num_heads_q, b.num_heads_kv, b.seqlen_q, b.seqlen_kv, b.head_dim = B, H, H, Nq, Nkv, D
    keep = kern._bind_fields(p, params, device, only=set(kern.block_mask_info.get("params", ())))
    return p, keep


def argument_checks(kern, B, H, Nq, Nkv, D, params, device):
    """The return codes of the entries for refused arguments: 1 (cudaErrorInvalidValue), 801 for a head dim
    without a kernel. None when all are those, else what differs."""
    import torch
    from cuir import block_mask as bml
    from cuir.variant_lib import BlockMaskStruct
    info = kern.block_mask_info
    tiles = bml.tiles_for(info, D)
    p, keep = _params_struct(kern, B, H, Nq, Nkv, D, params, device)
    good = kern.block_mask(B, H, Nq, Nkv, head_dim=D, device=device, **params)
    ptrs = [getattr(good, n).data_ptr() for n in bml.LISTS]

    def struct(**change):
        dims = dict(zip(("batch", "heads", "q_blocks", "kv_blocks"), good.dims), block_m=tiles["block_m"],
                    block_n=tiles["block_n"])
        s = BlockMaskStruct(*ptrs, *dims.values())
        for k, v in change.items():
            setattr(s, k, v)
        return s

    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    call = lambda pp, s: kern._bm_entry(pp, s, stream)  # noqa: E731
    codes = {"NULL params": call(None, ctypes.byref(struct())), "NULL mask": call(ctypes.byref(p), None),
             "dims off by one": call(ctypes.byref(p), ctypes.byref(struct(q_blocks=good.q_blocks + 1))),
             "other tiles": call(ctypes.byref(p), ctypes.byref(struct(block_n=tiles["block_n"] * 2))),
             "NULL list": call(ctypes.byref(p), ctypes.byref(struct(kv_indices=None))),
             "misaligned list": call(ctypes.byref(p), ctypes.byref(struct(kv_indices=ptrs[1] + 2)))}
    arrays = [f["name"] for f in kern.fields if f["name"] in info.get("params", ()) and
              f["type"] in ("int32_ptr", "float_ptr", "tensor")]
    if arrays:
        saved = getattr(p, arrays[0])
        setattr(p, arrays[0], None)
        codes[f"NULL {arrays[0]}"] = call(ctypes.byref(p), ctypes.byref(struct()))
        setattr(p, arrays[0], saved)
    dims = (ctypes.c_int32 * 4)()
    codes["dims: NULL dims"] = kern._bm_dims(ctypes.byref(p), None)
    p.base.head_dim = 96
    unsupported = {"head dim 96": call(ctypes.byref(p), ctypes.byref(struct())),
                   "dims: head dim 96": kern._bm_dims(ctypes.byref(p), dims)}
    p.base.head_dim = D
    p.base.seqlen_kv = -1
    codes["dims: negative Nkv"] = kern._bm_dims(ctypes.byref(p), dims)
    torch.cuda.synchronize()
    del keep
    bad = {k: v for k, v in codes.items() if v != 1}
    bad.update({k: v for k, v in unsupported.items() if v != 801})
    return None if not bad else f"codes other than 1 (801 for head dim 96): {bad}"


# ---- running (GPU) ---------------------------------------------------------------------------------------------

def _kernel_and_params(library, entry, tensors):
    import importlib
    import torch
    comp = importlib.import_module("cuir.compile")
    kern = comp.load_once(library)
    score_mod, mask_mod = entry.mods(tensors)
    values = comp.trace(score_mod, mask_mod, entry.normalizer, entry.name, defaults=False)[1]
    device = torch.device("cuda", torch.cuda.current_device())
    params = {n: comp.tensor_for(kern, n, t, device) for n, t in values.items()}
    return kern, params, mask_mod


def _entry_time(kern, bm, B, H, Nq, Nkv, D, params):
    """Median ms of the classification entry alone, into the buffers of `bm` (no allocation, no Python
    binding work beyond the call)."""
    import torch
    from cuir import block_mask as bml
    from cuir.variant_lib import BlockMaskStruct
    from check_catalogue import _time
    info = kern.block_mask_info
    p, keep = _params_struct(kern, B, H, Nq, Nkv, D, params, torch.device("cuda", torch.cuda.current_device()))
    s = BlockMaskStruct(*(getattr(bm, n).data_ptr() for n in bml.LISTS), *bm.dims, *bm.block_size)
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

    def call():
        if kern._bm_entry(ctypes.byref(p), ctypes.byref(s), stream) != 0:
            raise RuntimeError(f"{info['entry']} failed")
    t = _time(call)
    del keep
    return t


def _flex_mask_time(mask_mod, info, B, H, Nq, Nkv):
    from torch.nn.attention.flex_attention import create_block_mask
    from check_catalogue import _time
    Bf = B if "batch" in info["depends"] else None
    Hf = H if "heads" in info["depends"] else None
    make = lambda: create_block_mask(mask_mod, Bf, Hf, Nq, Nkv, device="cuda", _compile=True)  # noqa: E731
    return _time(make, warmup=3, reps=10)


def run_item(stage_dir, item, entry, shape, timing):
    import torch
    from check_catalogue import TOLERANCE, _compare, _inputs, _time
    B, Hq, Hkv, Nq, Nkv, D = shape
    tensors = {n: t.cuda() for n, t in entry.make(B, Hq, Nq, Nkv, "cpu").items()}
    kern, params, mask_mod = _kernel_and_params(stage_dir / item["library"], entry, tensors)
    row = {"case": item["case"], "kernel": item["kernel"], "shape": item["shape"]}
    if not kern.block_mask_info:
        row["error"] = "the library has no runtime block mask (its manifest has no \"block_mask\")"
        return row
    from cuir import block_mask as bml
    info = bml.tiles_for(kern.block_mask_info, D)
    row["tiles"] = f"{info['block_m']}x{info['block_n']}"
    row["depends"] = ",".join(info["depends"]) or "-"
    bm = kern.block_mask(B, Hq, Nq, Nkv, head_dim=D, device="cuda", **params)
    small = item["shape"] in CHECKS
    classes, broadcast = expected_classes(mask_mod, info, B, Hq, Nq, Nkv, "cuda", small)
    row["lists"] = broadcast or compare_lists(bm, lists_of(classes)) or "ok"
    row["dense"] = "ok" if torch.equal(bm.to_dense(), classes) else "to_dense differs"
    total = classes.numel()
    row["skipped"] = (classes == 0).sum().item() / total
    row["full"] = (classes == 2).sum().item() / total
    if small:
        row["args"] = argument_checks(kern, B, Hq, Nq, Nkv, D, params,
                                      torch.device("cuda", torch.cuda.current_device())) or "ok"
        for dtype, name in ((torch.bfloat16, "bf16"), (torch.float16, "fp16")):
            q, k, v = _inputs(B, Hq, Hkv, Nq, Nkv, D, dtype, seed=hash((entry.name, item["shape"])) & 0xFFFF)
            softmax = entry.normalizer == "softmax"
            ref = entry.reference(q.cpu(), k.cpu(), v.cpu(), D ** -0.5, {n: t.cpu() for n, t in tensors.items()})
            ref, ref_lse = ref if isinstance(ref, tuple) else (ref, None)
            for how, given in (("given", bm), ("auto", None)):
                res = kern(q, k, v, layout="bhnd", return_lse=softmax, block_mask=given, **params)
                out, lse = res if softmax else (res, None)
                ok, errs = _compare(out, ref, lse, ref_lse, TOLERANCE[name])
                row[f"{name}_{how}"] = {"ok": ok, **errs}
    elif timing:
        row["classify_ms"] = _time(lambda: kern.block_mask(B, Hq, Nq, Nkv, head_dim=D, device="cuda", **params))
        row["entry_ms"] = _entry_time(kern, bm, B, Hq, Nq, Nkv, D, params)
        q, k, v = _inputs(B, Hq, Hkv, Nq, Nkv, D, torch.bfloat16, seed=1)
        row["attention_ms"] = _time(lambda: kern(q, k, v, layout="bhnd", block_mask=bm, **params))
        row["attention_auto_ms"] = _time(lambda: kern(q, k, v, layout="bhnd", **params))
        try:
            row["flex_mask_ms"] = _flex_mask_time(mask_mod, info, B, Hq, Nq, Nkv)
        except Exception as e:  # FlexAttention's own failure is a note in the row
            row["flex_note"] = f"{type(e).__name__}: {str(e)[:160]}"
    return row


def line(r):
    head = f"{r['case']:<22} {r['kernel']:<5} {r['shape']:<8}"
    if "error" in r:
        return f"{head} ERROR {r['error']}"
    s = f"{head} {r['tiles']:<8} dep {r['depends']:<11} lists {r['lists']}  skip {r['skipped']:.0%} full " \
        f"{r['full']:.0%}"
    if "args" in r:
        s += f"  args {r['args']}"
    for k in ("bf16_given", "bf16_auto", "fp16_given", "fp16_auto"):
        if k in r:
            s += f"  {k} {'ok' if r[k]['ok'] else 'BAD'} {r[k]['max_err']:.1e}"
    if "classify_ms" in r:
        flex = r.get("flex_mask_ms")
        s += f"  classify {r['classify_ms'] * 1e3:.0f} us (entry {r['entry_ms'] * 1e3:.0f})"
        s += f" flex {flex * 1e3:.0f} us (x{flex / r['classify_ms']:.1f})" if flex else f" flex - ({r.get('flex_note')})"
        s += f"  attention {r['attention_ms']:.3f} ms (auto {r['attention_auto_ms']:.3f})"
    return s


def markdown(rows, device):
    out = [f"Runtime block masks, {device}, {time.strftime('%Y-%m-%d')}: the classification (CuIR's "
           f"<entry>_block_mask through attn.block_mask) against FlexAttention's create_block_mask(..., "
           f"_compile=True) for the same mask (median of CUDA-event times), and the attention with the lists "
           f"given (bf16, d = 128).", "",
           "| case | kernel | shape | tiles skipped / full | classify us (entry alone) | create_block_mask us | "
           "ratio | attention ms | attention + classify ms |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "classify_ms" in r:
            flex = r.get("flex_mask_ms")
            cells = [r["case"], r["kernel"], r["shape"], f"{r['skipped']:.0%} / {r['full']:.0%}",
                     f"{r['classify_ms'] * 1e3:.0f} ({r['entry_ms'] * 1e3:.0f})",
                     f"{flex * 1e3:.0f}" if flex else f"– ({r.get('flex_note')})",
                     f"{flex / r['classify_ms']:.1f}x" if flex else "–",
                     f"{r['attention_ms']:.3f}", f"{r['attention_auto_ms']:.3f}"]
            out.append("| " + " | ".join(cells) + " |")
    checked = [r for r in rows if "bf16_given" in r]
    good = [r for r in checked if r["lists"] == "ok" and r["args"] == "ok" and
            all(r[k]["ok"] for k in ("bf16_given", "bf16_auto", "fp16_given", "fp16_auto"))]
    exact = [r for r in rows if r.get("lists") == "ok"]
    out += ["", f"Lists equal to the torch computation of the mask: {len(exact)} of {len(rows)} runs; outputs "
            f"against float64 (ragged {SHAPES['ragged']}, GQA {SHAPES['gqa']}, bf16 and fp16, lists given and "
            f"computed per call) and argument checks: {len(good)} of {len(checked)} pass."]
    return "\n".join(out) + "\n"


def ok_row(r):
    return "error" not in r and r.get("lists") == "ok" and r.get("args", "ok") == "ok" and \
        r.get("dense") == "ok" and all(r[k]["ok"] for k in ("bf16_given", "bf16_auto", "fp16_given", "fp16_auto")
                                       if k in r)


def run(stage_dir, json_path, md_path, timing, names, checks_only=False):
    import torch
    info = json.loads((stage_dir / "stage.json").read_text())
    known = cases()
    rows = []
    for item in info["staged"]:
        if (names and item["case"] not in names) or (checks_only and item["shape"] not in CHECKS):
            continue
        shape = info["shapes"][item["shape"]]
        try:
            row = run_item(stage_dir, item, known[item["case"]], shape, timing)
        except Exception as e:
            row = {"case": item["case"], "kernel": item["kernel"], "shape": item["shape"],
                   "error": f"{type(e).__name__}: {str(e)[:300]}"}
        rows.append(row)
        print(line(row), flush=True)
    device = torch.cuda.get_device_name()
    json_path.write_text(json.dumps({"rows": rows, "failed_to_stage": info["failed"], "device": device}, indent=1))
    if md_path:
        md_path.write_text(markdown(rows, device))
    bad = [r for r in rows if not ok_row(r)]
    print(f"{len(rows)} runs, {len(bad)} failed, {len(info['failed'])} not staged; wrote {json_path}")
    return 1 if bad or info["failed"] else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--stage", type=pathlib.Path)
    mode.add_argument("--run", type=pathlib.Path)
    ap.add_argument("--kernels", default="sm80,sm90")
    ap.add_argument("--opt", default=str(ROOT / "build" / "bin" / "cuir-opt"))
    ap.add_argument("--block-mask", default="runtime", choices=("runtime", "auto"),
                    help="--stage: the split's block-mask option (auto: masks it splits statically have no lists "
                         "and are reported as such)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--json", type=pathlib.Path)
    ap.add_argument("--md", type=pathlib.Path)
    ap.add_argument("--memcheck", action="store_true", help="first run the checks under compute-sanitizer")
    ap.add_argument("--no-bench", action="store_true", help="no timing (the bench shapes' lists are checked)")
    ap.add_argument("--checks-only", action="store_true", help="the ragged and GQA shapes only")
    ap.add_argument("names", nargs="*", help="cases (default: all)")
    args = ap.parse_args()
    if args.stage:
        return stage(args.stage, args.names, args.kernels.split(","), args.opt, args.block_mask, args.jobs)
    rc = 0
    json_path = args.json or args.run / "block_mask.json"
    if args.memcheck:
        sanitizer = os.environ.get("COMPUTE_SANITIZER", "/usr/local/cuda/bin/compute-sanitizer")
        r = subprocess.run([sanitizer, "--tool", "memcheck", "--error-exitcode", "3", sys.executable, __file__,
                            "--run", str(args.run), "--checks-only", "--json",
                            str(json_path.with_suffix(".memcheck.json")), *args.names])
        print(f"compute-sanitizer memcheck: exit {r.returncode}" + (" (clean)" if r.returncode == 0 else ""))
        rc = r.returncode
    return run(args.run, json_path, args.md, not args.no_bench, args.names, args.checks_only) or rc


if __name__ == "__main__":
    sys.exit(main())
