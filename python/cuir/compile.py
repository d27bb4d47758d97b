"""Build attention variant kernels from Python.

    import cuir
    attn = cuir.compile("prefixlm,softcap{softcap=30}")           # a built-in spec
    attn = cuir.compile(score_mod=my_score_mod, mask_mod=my_mask)  # FlexAttention style
    attn = cuir.compile("causal", kernel="sm90")                   # on the warp-specialized Hopper kernel
    out = attn(q, k, v, prefix_len=..., softcap=30.0)

Compiling runs `cuir-opt <kernel>.cu --lift --transfer=... --cuir-split-full-partial
--lower` (cuir-opt from $CUIR_OPT, PATH, or the build tree) and needs clang and
the CUDA toolkit; loading and running needs only the GPU. The library and its
manifest land in `out_dir` (a fresh temporary directory by default), so a
variant built on one machine runs on another with cuir.load_variant.
"""
import os
import pathlib
import shutil
import subprocess
import tempfile

from .variant import trace_variant
from .variant_lib import load_variant

_ROOT = pathlib.Path(__file__).resolve().parents[2]
KERNELS = {"sm80": _ROOT / "kernels" / "sm80" / "flash_fwd.cu", "sm90": _ROOT / "kernels" / "sm90" / "flash_fwd.cu"}
# The archs each kernel is compiled for by default: the sm_90 kernel uses sm_90a-only instructions.
DEFAULT_ARCHS = {"sm80": ("sm_80", "sm_90"), "sm90": ("sm_90a",)}


def _cuir_opt():
    for cand in (os.environ.get("CUIR_OPT"), shutil.which("cuir-opt"), _ROOT / "build" / "bin" / "cuir-opt"):
        if cand and pathlib.Path(cand).exists():
            return str(cand)
    raise RuntimeError("cuir-opt not found: build CuIR (README) or set CUIR_OPT")


def compile(spec=None, score_mod=None, mask_mod=None, normalizer="softmax", kernel="sm80", out_dir=None,
            name=None, split=True, archs=None, load=True):
    """Build a variant kernel (by built-in spec or from score_mod/mask_mod) and return a callable.

    kernel: "sm80" (FA2-class, runs on sm_80 and later) or "sm90" (warp-specialized, Hopper only)."""
    if kernel not in KERNELS:
        raise ValueError(f"unknown kernel {kernel!r}: one of {', '.join(KERNELS)}")
    archs = archs or DEFAULT_ARCHS[kernel]
    if (spec is None) == (score_mod is None and mask_mod is None and normalizer == "softmax"):
        raise ValueError("give a built-in spec, or score_mod/mask_mod/normalizer (not both)")
    out_dir = pathlib.Path(out_dir or tempfile.mkdtemp(prefix="cuir-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    name = name or (spec.split("{")[0].replace(",", "_").replace("-", "_") if spec else "traced")
    if spec is None:
        variant_file = out_dir / f"{name}.variant.mlir"
        variant_file.write_text(trace_variant(score_mod, mask_mod, normalizer, name=name))
        spec = str(variant_file)
    cmd = [_cuir_opt(), str(KERNELS[kernel]), "--lift", f"--transfer={spec}"]
    if split:
        cmd.append("--cuir-split-full-partial")
    cmd += [f"--lower=archs={','.join(archs)}", "-o", str(out_dir / f"{name}.cu")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"cuir-opt failed:\n{r.stderr[-4000:]}")
    library = out_dir / f"lib{name}.so"
    return load_variant(library) if load else library
