#!/usr/bin/env python3
"""Writes an LLM answer that holds a given lift, for replays and the scripted
server:

    answer_of.py LIFT.mlir [--replace OLD NEW] [--md OUT.md] [--jsonl OUT.jsonl]

--md writes the answer's text, --jsonl a one-exchange replay file (no
prompt_sha256, so it answers whatever is asked). --replace changes the first
OLD of the lift into NEW, and fails if there is none: the answers of
../shared/repro/wrong-sem.jsonl are made this way from the bundled lift.
"""

import argparse
import json
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("lift")
    parser.add_argument("--replace", nargs=2, metavar=("OLD", "NEW"))
    parser.add_argument("--md")
    parser.add_argument("--jsonl")
    args = parser.parse_args()
    with open(args.lift, encoding="utf-8") as f:
        lift = f.read()
    if args.replace:
        old, new = args.replace
        if old not in lift:
            sys.exit(f"answer_of.py: '{old}' is not in {args.lift}")
        lift = lift.replace(old, new, 1)
    text = "Here is the lift.\n\n```mlir\n" + lift + "```\n"
    if args.md:
        with open(args.md, "w", encoding="utf-8") as f:
            f.write(text)
    if args.jsonl:
        with open(args.jsonl, "w", encoding="utf-8") as f:
            json.dump({"response": {"text": text}}, f)
            f.write("\n")


if __name__ == "__main__":
    main()
