"""Build attention variant kernels from Python.

    import cuir
    attn = cuir.compile("prefixlm,softcap{softcap=30}")           # a built-in spec
    attn = cuir.compile(score_mod=my_score_mod, mask_mod=my_mask)  # FlexAttention style
    attn = cuir.compile("causal", kernel="sm90")                   # on the warp-specialized Hopper kernel
    out = attn(q, k, v, prefix_len=..., softcap=30.0)

Compiling runs `cuir-opt <kernel>.cu --lift --transfer=... --cuir-split-full-partial
--lower` (cuir-opt from $CUIR_OPT, PATH, or the build tree) and needs clang and
the CUDA toolkit; loading and running needs only the GPU. Without `out_dir` the
kernel goes to the on-disk cache (cuir/cache.py): the same variant (kernel source,
variant text without its captured values, archs, toolchain) is compiled once, and
found again by later calls and other processes. With `out_dir`, the library and
its manifest land there, so a variant built on one machine runs on another with
cuir.load_variant. Tensors the score_mod/mask_mod capture are passed to the kernel
at each call with the values they have at the `compile` call.
"""
import os
import pathlib
import re
import shutil
import subprocess
import tempfile
import weakref

from . import cache as _cache
from . import variant as _variant
from .variant_lib import load_variant, load_variant_backward

_ROOT = pathlib.Path(__file__).resolve().parents[2]
KERNELS = {"sm80": _ROOT / "kernels" / "sm80" / "flash_fwd.cu", "sm90": _ROOT / "kernels" / "sm90" / "flash_fwd.cu"}
# The backward kernels a variant's backward pass is lowered from (their Source CuIR: docs/Backward.md).
BWD_KERNELS = {"sm80": _ROOT / "kernels" / "sm80" / "flash_bwd.cu", "sm90": _ROOT / "kernels" / "sm90" / "flash_bwd.cu"}
# The archs each kernel is compiled for by default: the sm_90 kernel uses sm_90a-only instructions.
DEFAULT_ARCHS = {"sm80": ("sm_80", "sm_90"), "sm90": ("sm_90a",)}
_LOADED = {}  # library path -> VariantKernel: loaded once per process


def cuir_opt():
    for cand in (os.environ.get("CUIR_OPT"), shutil.which("cuir-opt"), _ROOT / "build" / "bin" / "cuir-opt"):
        if cand and pathlib.Path(cand).exists():
            return str(cand)
    raise RuntimeError("cuir-opt not found: build CuIR (README) or set CUIR_OPT")


_cuir_opt = cuir_opt  # the name earlier code used


def trace(score_mod, mask_mod, normalizer, name, defaults=True, detail=None):
    """(variant text, {param name: tensor}) of score_mod/mask_mod; with `defaults`, the text carries the
    captured values (a library built from it runs without being passed them). `detail`, a dict, receives the
    trace's "sources" and "baked" (cuir/trace/captures.py's Captures)."""
    traced = _variant.trace(score_mod, mask_mod, normalizer, name=name, defaults=defaults)
    if detail is not None:
        detail.update(sources=traced.sources, baked=traced.baked)
    return traced.text, dict(traced.values)


def lower_command(kernel, spec, out_cu, archs, split=True, block_mask="auto", backward=False):
    """cuir-opt's pipeline for a variant; block_mask: the split's treatment of masks it cannot bound
    ("auto": a runtime block mask, "runtime": one for every mask, "dense": every tile masked). backward: the
    variant's backward pass, from the kernel's flash_bwd.cu (its split: query steps over the transposed
    lists of a runtime block mask)."""
    source = BWD_KERNELS[kernel] if backward else KERNELS[kernel]
    cmd = [cuir_opt(), str(source), "--lift", f"--transfer={spec}"]
    if split:
        cmd.append("--cuir-split-full-partial" + ("" if block_mask == "auto" else f"=block-mask={block_mask}"))
    return cmd + [f"--lower=archs={','.join(archs)}", "-o", str(out_cu)]


def build_cached(kernel, spec_text, name, archs, split=True, builtin=False, cache=None, block_mask="auto",
                 backward=False):
    """The library of a variant (a cuir.variant text without values, or a built-in spec) from the cache,
    compiled into it first if needed; backward: of its backward pass."""
    cache = cache or _cache.KernelCache()
    opt = cuir_opt()
    source = BWD_KERNELS[kernel] if backward else KERNELS[kernel]
    parts = {"kernel": kernel, "sources": _cache.kernel_sources_identity(source), "backward": backward,
             "variant": _cache.strip_locations(spec_text) if not builtin else None, "spec": spec_text if builtin else None,
             "name": name, "archs": list(archs), "split": split, "block_mask": block_mask,
             "toolchain": _cache.toolchain_identity(opt)}
    key = _cache.make_key(parts)

    def build(tmp):
        spec = spec_text
        if not builtin:
            spec = str(tmp / f"{name}.variant.mlir")
            pathlib.Path(spec).write_text(spec_text)
        what = "the backward of variant" if backward else "variant"
        _cache.run_with_progress(lower_command(kernel, spec, tmp / f"{name}.cu", archs, split, block_mask,
                                               backward),
                                 f"{what} '{name}' on the {kernel} kernel ({','.join(archs)})")
    entry = cache.get_or_build(key, parts, build)
    return entry / f"lib{name}.so"


def load_once(library, backward=False):
    """The VariantKernel (backward: VariantBackwardKernel) of a library, loaded once per process."""
    library = str(library)
    if library not in _LOADED:
        _LOADED[library] = load_variant_backward(library) if backward else load_variant(library)
    return _LOADED[library]


class BoundVariant:
    """A variant kernel with the captured tensors of its score_mod/mask_mod as default arguments."""

    def __init__(self, kernel, values):
        self.kernel, self.values = kernel, values
        self.manifest = kernel.manifest
        self.block_mask_info = kernel.block_mask_info

    def __call__(self, q, k, v, *args, **params):
        for pname, tensor in self.values.items():
            params.setdefault(pname, tensor_for(self.kernel, pname, tensor, q.device))
        return self.kernel(q, k, v, *args, **params)

    def block_mask(self, B, H, Nq, Nkv, head_dim=None, device=None, **params):
        """VariantKernel.block_mask, with the captured tensors' values at the `compile` call by default."""
        import torch
        device = torch.device(device if device is not None else "cuda")
        if device.type == "cuda" and device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        for pname, tensor in self.values.items():
            params.setdefault(pname, tensor_for(self.kernel, pname, tensor, device))
        return self.kernel.block_mask(B, H, Nq, Nkv, head_dim=head_dim, device=device, **params)


_DEVICE_COPIES = {}


def tensor_for(kernel, pname, tensor, device):
    """`tensor` as the kernel's field `pname` takes it: on `device`, contiguous, in the field's dtype.

    A copy is made only when needed, and kept while the tensor is unchanged (its version counter)."""
    import torch
    field = next((f for f in kernel.fields if f["name"] == pname), {})
    dtype = {"float_ptr": torch.float32, "int32_ptr": torch.int32}.get(field.get("type"), tensor.dtype)
    if tensor.device == device and tensor.dtype == dtype and tensor.is_contiguous():
        return tensor
    if tensor.requires_grad:  # a trained tensor: a differentiable copy, made again each call
        return tensor.to(device=device, dtype=dtype).contiguous()
    # Keyed by id(), which a new tensor may reuse once the old one is freed: the entry also holds a weak
    # reference to its tensor, and is used only while that is still this tensor.
    memo = (tensor._version, str(device), dtype)
    hit = _DEVICE_COPIES.get(id(tensor))
    if hit is None or hit[0]() is not tensor or hit[1] != memo:
        hit = (weakref.ref(tensor), memo, tensor.detach().to(device=device, dtype=dtype).contiguous())
        _DEVICE_COPIES[id(tensor)] = hit
    return hit[2]


def compile(spec=None, score_mod=None, mask_mod=None, normalizer="softmax", kernel="sm80", out_dir=None,
            name=None, split=True, archs=None, load=True, cache=None, backward=False):
    """Build a variant kernel (by built-in spec or from score_mod/mask_mod) and return a callable.

    kernel: "sm80" (FA2-class, runs on sm_80 and later) or "sm90" (warp-specialized, Hopper only).
    cache: use the on-disk kernel cache (default: when out_dir is not given).
    name: the stem of the built files (<name>.cu, lib<name>.so, ...), an identifier; default: from the spec's
    name, or "traced".
    load=False returns the library's path instead of the callable.
    backward=True also builds the variant's backward pass (from `kernel`'s backward kernel) and returns a
    differentiable callable (docs/Backward.md); load=False then returns both libraries' paths."""
    if kernel not in KERNELS:
        raise ValueError(f"unknown kernel {kernel!r}: one of {', '.join(KERNELS)}")
    archs = (archs,) if isinstance(archs, str) else tuple(archs or DEFAULT_ARCHS[kernel])  # "sm_90" is one
    if (spec is None) == (score_mod is None and mask_mod is None and normalizer == "softmax"):
        raise ValueError("give a built-in spec, or score_mod/mask_mod/normalizer (not both)")
    cache = (out_dir is None) if cache is None else cache
    name = _file_stem(name, spec)
    # Cached kernels take the captured values at each call; a library built into out_dir keeps them.
    text, values = (None, {}) if spec is not None else trace(score_mod, mask_mod, normalizer, name,
                                                             defaults=not cache)
    if cache:
        if spec is not None:
            library = build_cached(kernel, spec, name, archs, split, builtin=True)
        else:
            library = build_cached(kernel, text, name, archs, split)
    else:
        library = _build_in(pathlib.Path(out_dir or tempfile.mkdtemp(prefix="cuir-")), kernel, spec, text, name,
                            archs, split)
    if backward:
        bwd_library = _backward_library(kernel, spec, text, name, cache, pathlib.Path(library).parent)
        if not load:
            return library, bwd_library
        from .autograd_variant import TrainableVariant
        return TrainableVariant(load_once(library), load_once(bwd_library, backward=True), values)
    if not load:
        return library
    kernel_obj = load_once(library)
    return BoundVariant(kernel_obj, values) if values else kernel_obj


def _file_stem(name, spec):
    """The stem of the files a build writes (<stem>.cu, lib<stem>.so, ...): `name`, which must be an
    identifier (a path such as "../x" would write outside out_dir), or one made from the spec."""
    if name is not None:
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ValueError(f"name must be an identifier (letters, digits and '_'; it names the built files), "
                             f"got {name!r}")
        return name
    if not spec:
        return "traced"
    base = pathlib.Path(spec).stem if spec.endswith(".mlir") else spec.split("{")[0]
    base = re.sub(r"[^A-Za-z0-9_]", "_", base)
    return base if re.match(r"[A-Za-z_]", base) else "v_" + base


def _backward_library(kernel, spec, text, name, cache, out_dir):
    """The library of a variant's backward pass, on the backward kernel of the forward's `kernel` (sm80 or
    sm90: both have a Source CuIR the transfer reads)."""
    archs = DEFAULT_ARCHS[kernel]
    if cache:
        return build_cached(kernel, spec if spec is not None else text, name + "_bwd", archs,
                            builtin=spec is not None, backward=True)
    out = out_dir  # beside the forward's library and its variant file
    if spec is None:
        spec = str(out / f"{name}.variant.mlir")
    r = subprocess.run(lower_command(kernel, spec, out / f"{name}_bwd.cu", archs, backward=True),
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"cuir-opt failed:\n{r.stderr[-4000:]}")
    return out / f"lib{name}_bwd.so"


def _build_in(out_dir, kernel, spec, text, name, archs, split):
    """Compile into out_dir (no cache), the variant's values as the manifest's defaults."""
    out_dir.mkdir(parents=True, exist_ok=True)
    if spec is None:
        variant_file = out_dir / f"{name}.variant.mlir"
        variant_file.write_text(text)
        spec = str(variant_file)
    r = subprocess.run(lower_command(kernel, spec, out_dir / f"{name}.cu", archs, split), capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise RuntimeError(f"cuir-opt failed:\n{r.stderr[-4000:]}")
    return out_dir / f"lib{name}.so"
