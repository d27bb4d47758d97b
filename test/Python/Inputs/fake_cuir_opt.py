#!/usr/bin/env python3
"""A stand-in for cuir-opt in the cache tests: `--version`, or writes what `--lower` would (a fake library,
its manifest, the .cu) for `-o DIR/NAME.cu`, and appends one line to $FAKE_OPT_LOG per build.
$FAKE_OPT_FAIL=1 makes it fail like a compile error; $FAKE_OPT_SLEEP delays it (seconds)."""
import json
import os
import pathlib
import sys
import time

args = sys.argv[1:]
if args == ["--version"]:
    print("fake cuir-opt 1.0")
    sys.exit(0)
if args[:1] == ["-"]:  # the tracer's verification of the traced text
    sys.stdin.read()
    sys.exit(0)
time.sleep(float(os.environ.get("FAKE_OPT_SLEEP", "0")))
if os.environ.get("FAKE_OPT_FAIL"):
    print("kernel.cu:1:1: error: something the lowering rejects", file=sys.stderr)
    sys.exit(1)
out = pathlib.Path(args[args.index("-o") + 1])
out.parent.mkdir(parents=True, exist_ok=True)
name = out.stem
transfer = next(a for a in args if a.startswith("--transfer="))[len("--transfer="):]
out.write_text(f"// {transfer}\n")
(out.parent / f"lib{name}.so").write_bytes(b"\x7fELF fake library of " + name.encode())
(out.parent / f"{name}.json").write_text(json.dumps({"variant": name, "normalizer": "softmax", "fields": []}))
with open(os.environ["FAKE_OPT_LOG"], "a") as log:
    log.write(" ".join(args) + "\n")
