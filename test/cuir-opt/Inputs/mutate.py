"""Mutation fuzzing of cuir-opt: truncate, delete, duplicate and flip bytes of
a valid CuIR file and check that cuir-opt always ends with exit code 0 or 1,
in time, and never with a signal (a crash)."""
import argparse
import random
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("tool")
ap.add_argument("input")
ap.add_argument("--count", type=int, default=100)
ap.add_argument("--seed", type=int, default=0)
args = ap.parse_args()

rng = random.Random(args.seed)
data = open(args.input, "rb").read()


def mutate(buf):
    b = bytearray(buf)
    kind = rng.randrange(5)
    i = rng.randrange(len(b))
    if kind == 0:
        return bytes(b[:i])
    if kind == 1:
        j = min(len(b), i + rng.randrange(1, 200))
        return bytes(b[:i] + b[j:])
    if kind == 2:
        j = min(len(b), i + rng.randrange(1, 200))
        return bytes(b[:j] + b[i:j] + b[j:])
    if kind == 3:
        for _ in range(rng.randrange(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    tokens = [b"}", b"{", b"%", b":", b"tensor<", b"#cuir.frag<", b"cuir.gemm",
              b"-> ", b"[", b"]", b"0xFF", b"!cuir.token", b"pending -1"]
    return bytes(b[:i] + rng.choice(tokens) + b[i:])


failures = 0
with tempfile.NamedTemporaryFile(suffix=".mlir") as f:
    for n in range(args.count):
        f.seek(0)
        f.truncate()
        f.write(mutate(data))
        f.flush()
        try:
            r = subprocess.run([args.tool, f.name], capture_output=True,
                               timeout=20)
        except subprocess.TimeoutExpired:
            print(f"mutant {n}: timed out", file=sys.stderr)
            failures += 1
            continue
        if r.returncode not in (0, 1):
            print(f"mutant {n}: exit code {r.returncode}", file=sys.stderr)
            print(r.stderr.decode(errors="replace")[-2000:], file=sys.stderr)
            failures += 1
        elif r.returncode == 1 and b"error:" not in r.stderr:
            print(f"mutant {n}: failed without a diagnostic", file=sys.stderr)
            failures += 1
print(f"{args.count} mutants, {failures} crashes or hangs")
sys.exit(1 if failures else 0)
