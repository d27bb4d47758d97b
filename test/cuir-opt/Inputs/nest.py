"""Writes MLIR nested N levels deep, to stdout.

  nest.py scf-if N          a function with N nested scf.if
  nest.py attr N            a module attribute of N nested arrays
  nest.py type N            a function type of N nested tuples
  nest.py loc N             a module location of N nested callsites
  nest.py chain N           an affine map whose expression chains N additions
  nest.py kernel FILE N     FILE with N nested scf.if at the start of the
                            first cuir.kernel's body
  nest.py answer N          a replay file (provider=replay) of one LLM answer
                            holding N nested scf.if
"""
import json
import sys


def ifs(n, indent=""):
    return (indent + "%nest_c = arith.constant true\n" +
            "".join(indent + "scf.if %nest_c {\n" for _ in range(n)) +
            indent + "}" * n + "\n")


def main():
    kind = sys.argv[1]
    if kind == "kernel":
        lines = open(sys.argv[2]).read().splitlines(keepends=True)
        n = int(sys.argv[3])
        start = next(i for i, l in enumerate(lines) if "cuir.kernel" in l)
        body = next(i for i in range(start, len(lines))
                    if lines[i].rstrip().endswith("{"))
        lines.insert(body + 1, ifs(n, "  "))
        sys.stdout.write("".join(lines))
        return
    n = int(sys.argv[2])
    if kind == "scf-if":
        text = "func.func @f() {\n" + ifs(n) + "  return\n}\n"
    elif kind == "attr":
        text = "module attributes {test.a = " + "[" * n + "]" * n + "} {}\n"
    elif kind == "type":
        text = ("func.func private @f() -> " + "tuple<" * n + "i32" +
                ">" * n + "\n")
    elif kind == "loc":
        text = ('module {} loc(' + 'callsite(' * n + '"a"' +
                ' at "b")' * n + ')\n')
    elif kind == "answer":
        text = json.dumps({"response": {"text": "```mlir\n" + ifs(n) +
                                        "```\n"}}) + "\n"
    elif kind == "chain":
        text = ("module attributes {test.m = affine_map<(d0) -> (" +
                " + ".join(["d0"] * (n + 1)) + ")>} {}\n")
    else:
        sys.exit("unknown kind " + kind)
    sys.stdout.write(text)


main()
