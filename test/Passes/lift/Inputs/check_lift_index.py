#!/usr/bin/env python3
"""Checks a lift-cache index: every entry's source lifts offline from the
index alone, and its lift names real lines of the source.

    check_lift_index.py CUIR_OPT INDEX.json

A source edited since its lift was registered has another key; the check
reports the key it has now, so the entry can be re-registered.
"""
import json
import os
import re
import subprocess
import sys
import tempfile


def main():
    cuir_opt, index = sys.argv[1], sys.argv[2]
    with open(index, encoding="utf-8") as f:
        entries = json.load(f)["entries"]
    base = os.path.dirname(os.path.abspath(index))
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        # Nothing but the index may answer: no LLM, an empty user cache.
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("CUIR_LLM_") and not k.endswith("_API_KEY")}
        env["CUIR_LIFT_CACHE"] = os.path.join(tmp, "user-cache")
        for entry in entries:
            source = os.path.join(base, entry["source"])
            cuir = os.path.join(base, entry["cuir"])
            for path in (source, cuir):
                if not os.path.isfile(path):
                    print(f"{entry['source']}: missing file {path}")
                    failures += 1
            out = os.path.join(tmp, "out.mlir")
            run = subprocess.run(
                [cuir_opt, source, "--lift=cache-index=" + index,
                 "--cuir-check-locations=require-all=true", "-o", out],
                env=env, capture_output=True, text=True)
            if run.returncode != 0:
                key = re.search(r"\(key ([0-9a-f]{64})\)", run.stderr)
                if key and key.group(1) != entry["key"]:
                    print(f"{entry['source']}: stale entry: the source's key "
                          f"is now {key.group(1)}, the index has "
                          f"{entry['key']}")
                else:
                    print(f"{entry['source']}: does not lift from the "
                          f"index:\n{run.stderr}")
                failures += 1
                continue
            with open(out, encoding="utf-8") as f:
                if "cuir.kernel" not in f.read():
                    print(f"{entry['source']}: the lift has no cuir.kernel")
                    failures += 1
    print(f"checked {len(entries)} entries of {index}: {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
