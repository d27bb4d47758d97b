#!/usr/bin/env python3
"""Renders a hand-written Source CuIR template into a .cuir.mlir file.

The template is CuIR whose locations name source text instead of line and
column numbers, so that an edit of the CUDA kernel moves them with it:

    loc(@{acc_s|gemm_qk<T>(acc_s|1})              NameLoc "acc_s" over the 1st
                                                  occurrence of the text
    loc(@{|cp_async_commit_group();|4})           plain file range, 4th occurrence
    loc(@{p|fast_exp2(fmaf(|1} in @{|online_softmax_rescale<T>(|2})
                                                  a call site: the op lives in the
                                                  callee's line, reached from the call

A section between "// INSTANCE" and "// END-INSTANCE" is emitted once per
instantiation listed in "// INSTANTIATE E=bf16 D=128 BN=64 ..." lines, with
{{NAME}} replaced by each value. Usage:

    render_source_cuir.py template.mlir.in kernel.cu > kernel.cuir.mlir
    render_source_cuir.py --check template.mlir.in kernel.cu kernel.cuir.mlir
"""
import os
import re
import sys

ANCHOR = r"@\{([^|{}]*)\|([^|{}]+)\|(\d+)\}"
LOC = re.compile(r"loc\(" + ANCHOR + r"(?:\s+in\s+" + ANCHOR + r")?\)")


def find(source, text, occurrence, path):
    pos = -1
    for _ in range(occurrence):
        pos = source.find(text, pos + 1)
        if pos < 0:
            sys.exit(f"{path}: occurrence {occurrence} of {text!r} not found")
    line = source.count("\n", 0, pos) + 1
    col = pos - (source.rfind("\n", 0, pos) + 1) + 1
    return line, col, col + len(text)


def render_loc(name, text, occ, source, path, fname):
    occ = int(occ)
    line, start, end = find(source, text, occ, path)
    rng = f'"{fname}":{line}:{start} to {line}:{end}'
    return f'"{name}"({rng})' if name else rng


def render(template, source, path):
    fname = os.path.basename(path)
    lines = template.splitlines(keepends=True)
    out, instance, instantiations, inside = [], [], [], False
    for line in lines:
        if line.startswith("// INSTANTIATE "):
            instantiations.append(dict(kv.split("=") for kv in line.split()[2:]))
            continue
        if line.startswith("// INSTANCE"):
            inside = True
            continue
        if line.startswith("// END-INSTANCE"):
            inside = False
            for inst in instantiations:
                text = "".join(instance)
                for key, value in inst.items():
                    text = text.replace("{{" + key + "}}", value)
                out.append(text)
            continue
        (instance if inside else out).append(line)

    def loc(m):
        callee = render_loc(*m.group(1, 2, 3), source, path, fname)
        if m.group(4) is None:
            return f"loc({callee})"
        caller = render_loc(*m.group(4, 5, 6), source, path, fname)
        return f"loc(callsite({callee} at {caller}))"

    text = LOC.sub(loc, "".join(out))
    if "loc(@{" in text:
        bad = text[text.index("loc(@{"):].split("\n")[0]
        sys.exit(f"malformed location: {bad}")
    return text


def main():
    args = sys.argv[1:]
    check = args and args[0] == "--check"
    if check:
        args = args[1:]
    template = open(args[0]).read()
    source = open(args[1]).read()
    text = render(template, source, args[1])
    if check:
        if open(args[2]).read() != text:
            sys.exit(f"{args[2]} is stale: re-render it with "
                     f"tools/lift/render_source_cuir.py {args[0]} {args[1]}")
        return
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
