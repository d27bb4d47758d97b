"""Checks of the kernel cache with a fake cuir-opt ($CUIR_OPT): no GPU, no compiler.
Usage: cache_check.py CASE  (keying | second-process | corrupt | atomic | failure | values)"""
import os
import pathlib
import subprocess
import sys
import warnings

import torch

import cuir
from cuir import cache

LOG = pathlib.Path(os.environ["FAKE_OPT_LOG"])
slopes = torch.tensor([0.5, 0.25])


def score_mod(score, b, h, q_idx, kv_idx):
    return score + slopes[h] * (kv_idx - q_idx)


def builds():
    return len(LOG.read_text().splitlines()) if LOG.exists() else 0


def build(**kw):
    return cuir.compile(score_mod=score_mod, name="alibi", load=False, **kw)


case = sys.argv[1]
if case == "keying":
    a = build()
    b = build()
    print("same library:", a == b, "builds:", builds())
    c = build(archs=("sm_80",))
    print("other archs, other entry:", c != a, "builds:", builds())
    d = build(kernel="sm90")
    print("other kernel, other entry:", d != a, "builds:", builds())
    slopes.mul_(2)  # new values, same shape: a kernel parameter, not part of the key
    print("new values, same entry:", build() == a, "builds:", builds())
    other = cuir.compile(score_mod=lambda score, b, h, q_idx, kv_idx: score * 2.0, name="alibi", load=False)
    print("other variant text, other entry:", other != a, "builds:", builds())
    print("entry files:", sorted(p.name for p in a.parent.iterdir()))
elif case == "second-process":
    print("first:", build().parent.name == build().parent.name, "builds:", builds())
    r = subprocess.run([sys.executable, __file__, "second-child"], capture_output=True, text=True)
    print(r.stdout.strip(), r.stderr.strip())
elif case == "second-child":
    build()
    print("second process builds:", builds())
elif case == "corrupt":
    lib = build()
    lib.write_bytes(b"truncated")
    cache.KernelCache._verified.clear()  # as a new process would
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        again = build()
    print("warning:", [str(x.message) for x in w if "corrupt" in str(x.message)])
    print("rebuilt:", again.read_bytes().startswith(b"\x7fELF"), "builds:", builds())
    (again.parent / "entry.json").write_text("{not json")
    cache.KernelCache._verified.clear()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        build()
    print("warning:", [str(x.message).split(" (")[1].split(":")[0] for x in w if "corrupt" in str(x.message)], "builds:", builds())
elif case == "atomic":
    # Two processes build one key at once: both get a whole entry, no temporary is left behind.
    env = dict(os.environ, FAKE_OPT_SLEEP="1")
    procs = [subprocess.Popen([sys.executable, __file__, "second-child"], env=env, stdout=subprocess.PIPE,
                              text=True) for _ in range(2)]
    for p in procs:
        p.wait()
    root = cache.cache_root() / "kernels"
    print("entries:", len([p for p in root.iterdir() if not p.name.startswith(".")]),
          "leftovers:", [p.name for p in root.iterdir() if p.name.startswith(".")])
    c = cache.KernelCache()
    key = next(p.name for p in root.iterdir() if not p.name.startswith("."))
    print("verifies:", c.lookup(key) is not None)
elif case == "failure":
    os.environ["FAKE_OPT_FAIL"] = "1"
    try:
        build()
    except RuntimeError as e:
        print("raised:", str(e).splitlines()[0])
    root = cache.cache_root() / "kernels"
    print("left in the cache:", sorted(p.name for p in root.iterdir()))
