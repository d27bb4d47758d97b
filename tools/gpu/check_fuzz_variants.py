#!/usr/bin/env python3
"""The variants of tools/gpu/fuzz_variants.py that CuIR accepts, through the catalogue's GPU checks
(tools/gpu/check_catalogue.py for the forward, check_catalogue_bwd.py for the backward) in place of the
catalogue, at the one shape their references are written for: B 2, Hq 4, Hkv 2, Nq 83, Nkv 141, d 128
(grouped-query heads, Nq != Nkv, neither a multiple of a tile), bf16 and fp16.

With `cpu`, they run instead through cuir.catalogue.check: trace, the interpreter against the float64
reference (the reference processes see the same variants), lowering (--backward: the backward kernels
against float64 autograd), on this machine, no GPU.

Usage, as the two scripts (stage here, run on the GPU machine):
  PYTHONPATH=python /usr/bin/python3 tools/gpu/check_fuzz_variants.py bwd --stage build/fuzz-bwd --kernel sm90
  PYTHONPATH=python /usr/bin/python3 tools/gpu/check_fuzz_variants.py fwd --stage build/fuzz-fwd --kernels sm90
  PYTHONPATH=python python3 tools/gpu/check_fuzz_variants.py bwd --run build/fuzz-bwd
  PYTHONPATH=python python3 tools/gpu/check_fuzz_variants.py fwd --run build/fuzz-fwd --kernels sm90 --no-bench
  PYTHONPATH=python /usr/bin/python3 tools/gpu/check_fuzz_variants.py cpu /tmp/fuzz --opt build/bin/cuir-opt [--backward]
  PYTHONPATH=python /usr/bin/python3 tools/gpu/check_fuzz_variants.py refused /tmp/fuzz --opt build/bin/cuir-opt

With `refused`, the variants expected refused: each must be refused with a message, by the tracer or else by
cuir-opt's transfer onto the sm_80 forward (exit 1 if one is accepted or crashes).
"""
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "python"))
sys.path.insert(0, str(HERE))
from cuir.catalogue import entry as catalogue_entry  # noqa: E402
import check_catalogue  # noqa: E402
import fuzz_variants  # noqa: E402


def register_fuzz_variants():
    """The accepted fuzz variants become the catalogue (the check scripts look entries up by name)."""
    catalogue_entry._REGISTRY.clear()
    for name, v in fuzz_variants.VARIANTS.items():
        if v["expect"] != "accept" or v["ref"] is None:
            continue
        make = v["make"]
        catalogue_entry.register(
            name, "fuzz", v["note"] or name, v["mods"], v["ref"],
            lambda B, H, Nq, Nkv, device, make=make: {n: t.to(device) for n, t in make(B, H, Nq, Nkv).items()},
            v["normalizer"])


def check_on_cpu(argv):
    """cuir.catalogue.check over the fuzz variants; its reference processes register them too."""
    from cuir.catalogue import check
    hook = (f"sys.path.insert(0, {str(HERE)!r})\n"
            "import check_fuzz_variants\n"
            "check_fuzz_variants.register_fuzz_variants()\n")
    anchor = "from cuir import catalogue\n"
    assert anchor in check._REFERENCE
    check._REFERENCE = check._REFERENCE.replace(anchor, anchor + hook.replace("{", "{{").replace("}", "}}"), 1)
    return check.main(argv)


def check_refused(argv):
    """Each variant expected refused is refused with a message: a VariantError of the tracer, or an error of
    cuir-opt's transfer (onto the sm_80 forward's Source CuIR) for a variant that traces."""
    import argparse
    import subprocess
    from cuir.catalogue import check
    from cuir.variant import VariantError, trace
    ap = argparse.ArgumentParser(prog="check_fuzz_variants.py refused")
    ap.add_argument("workdir", type=pathlib.Path)
    ap.add_argument("--opt", default="cuir-opt")
    args = ap.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    bad = 0
    for name, v in fuzz_variants.VARIANTS.items():
        if v["expect"] != "refuse":
            continue
        try:
            text = trace(*v["mods"](v["make"](2, 4, 83, 141)), v["normalizer"], name=name).text
        except VariantError as e:
            print(f"refused {name} (trace): {str(e).splitlines()[0][:160]}")
            continue
        except Exception as e:  # a crash of the tracer is a defect, not a refusal
            print(f"CRASH {name} (trace): {type(e).__name__}: {e}")
            bad += 1
            continue
        path = args.workdir / f"{name}.mlir"
        path.write_text(text)
        r = subprocess.run([args.opt, str(check.SOURCE_CUIR["sm80"]), f"--transfer={path}", "-o", "/dev/null"],
                           capture_output=True, text=True, timeout=300)
        message = check.first_error(r.stderr + r.stdout)
        if r.returncode == 1 and "error:" in message:
            print(f"refused {name} (transfer): {message[:160]}")
        else:
            print(f"NOT REFUSED {name}: exit {r.returncode}: {message[:160]}")
            bad += 1
    print(f"{bad} of the variants expected refused were not")
    return 1 if bad else 0


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("fwd", "bwd", "cpu", "refused"):
        print(__doc__, file=sys.stderr)
        return 2
    which = sys.argv.pop(1)
    if which == "refused":
        return check_refused(sys.argv[1:])
    register_fuzz_variants()
    if which == "cpu":
        return check_on_cpu(sys.argv[1:])
    # One shape, named "ragged" (the forward also runs that one through cuir.flex_attention).
    check_catalogue.SHAPES.clear()
    check_catalogue.SHAPES["ragged"] = (2, 4, 2, 83, 141, 128)
    check_catalogue.CHECKS = ("ragged",)
    if which == "fwd":
        return check_catalogue.main()
    import check_catalogue_bwd
    check_catalogue_bwd.CHECKS = check_catalogue.CHECKS
    return check_catalogue_bwd.main()


if __name__ == "__main__":
    sys.exit(main())
