#!/usr/bin/env python3
"""Tries cuir-opt as a hostile user would and tabulates what went wrong.

    /usr/bin/python3 tools/reliability/probe.py [--cuir-opt build/bin/cuir-opt] [--only CATEGORY] [-v]

Run from the repository root after a build. Every probe runs in a fresh
temporary directory with a private HOME and lift cache, offline (LLM answers
come from replay files or from a scripted server on 127.0.0.1). For each
probe it records:

  crash      the process died by a signal, or printed a stack dump
  hang       it ran past its time limit
  leftover   a temporary (.cuir-*, *.cuir-tmp-*) is left in its directory
  unclear    it failed without an 'error:' diagnostic, with a Python
             traceback, or at a location of 0:0 where one was expected
  wrong      the outcome differs from the expected one (a good run failed,
             a bad input was accepted, a file the user had changed or was
             lost, a secret was printed, sent or written)

and prints one table row per category. The exit status is 1 if any count is
not zero. The probes' reasons are in PROBES below.
"""
import argparse
import glob
import hashlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SM80 = os.path.join(ROOT, "kernels", "sm80")
REPRO = os.path.join(os.path.dirname(ROOT), "shared", "repro")
SERVER = os.path.join(ROOT, "test", "LLM", "Inputs", "llm_server.py")
SECRET = "sk-probe-SECRET-9f8e7d6c5b4a"


class Probe:
    def __init__(self, category, name, args, expect="error", timeout=120,
                 setup=None, check=None, env=None, stdin=None, signal_after=None,
                 clear_location=True):
        self.category, self.name, self.args = category, name, args
        self.expect, self.timeout = expect, timeout
        self.setup, self.check, self.env = setup, check, env or {}
        self.stdin, self.signal_after = stdin, signal_after
        self.clear_location = clear_location


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def leftovers(d):
    found = []
    for dirpath, dirnames, filenames in os.walk(d):
        for n in dirnames + filenames:
            if n.startswith(".cuir-") or ".cuir-tmp-" in n:
                found.append(os.path.relpath(os.path.join(dirpath, n), d))
    return found


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def nested(depth, open_, close, inner="0"):
    return open_ * depth + inner + close * depth


def deep_if_module(depth):
    body = "%c = arith.constant true\n"
    for _ in range(depth):
        body += "scf.if %c {\n"
    body += "}\n" * depth
    return "func.func @f() {\n" + body + "return\n}\n"


# --- checks run after a probe: return a problem string or None -------------

def unchanged(name):
    def check(d, r):
        if sha(os.path.join(d, name)) != r["before"].get(name):
            return name + " was changed or lost"
    return check


def parses(cuir_opt, name):
    def check(d, r):
        p = os.path.join(d, name)
        if not os.path.exists(p):
            return name + " is missing"
        if subprocess.run([cuir_opt, p, "-o", os.devnull],
                          capture_output=True).returncode != 0:
            return name + " does not parse"
    return check


def absent(*names):
    def check(d, r):
        present = [n for n in names if glob.glob(os.path.join(d, n))]
        if present:
            return "left behind: " + ", ".join(present)
    return check


def no_secret(*files):
    """No secret in what was printed or in `files`; the scripted server's own
    log (what reached it) is not looked at."""
    def check(d, r):
        texts = [r["stdout"], r["stderr"]]
        for pattern in files:
            for p in glob.glob(os.path.join(d, pattern), recursive=True):
                if os.path.isfile(p) and not p.endswith("requests.log") and "/.home/" not in p:
                    texts.append(open(p, errors="replace").read())
        for t in texts:
            for s in (SECRET, SECRET[:12] + SECRET[12:20], "hunter2", "tok-probe-77"):
                if s in t:
                    return "a secret ('%s...') was printed or written" % s[:8]
    return check


def nothing_served(d, r):
    log = os.path.join(d, "requests.log")
    if os.path.exists(log) and "=== request" in open(log, errors="replace").read():
        return "a request reached the proxy"


def all_of(*checks):
    def check(d, r):
        for c in checks:
            problem = c(d, r)
            if problem:
                return problem
    return check


# --- the probes --------------------------------------------------------------

def probes(cuir_opt):
    cu = os.path.join(SM80, "flash_fwd.cu")
    src = os.path.join(SM80, "flash_fwd.cuir.mlir")
    P = []

    # Files.
    def big_input(d):
        shutil.copy(src, os.path.join(d, "x.mlir"))

    def previous_output(d):
        big_input(d)
        write(os.path.join(d, "y.mlir"), "// the user's earlier output\n")
        write(os.path.join(d, "out", "k.cu"), "// the user's earlier kernel\n")

    P += [
        Probe("files", "same path in and out (>16 KiB)",
              ["x.mlir", "--transfer=prefixlm", "-o", "x.mlir"], "ok",
              setup=big_input, check=parses(cuir_opt, "x.mlir")),
        Probe("files", "failing pass keeps the earlier -o",
              ["x.mlir", "--transfer=nosuch", "-o", "y.mlir"], setup=previous_output,
              check=unchanged("y.mlir")),
        Probe("files", "failing pass after --lower keeps the earlier set",
              [cu, "--lift", "--transfer=prefixlm", "--lower=compile=false",
               "--cuir-interpret=kernel=nosuch", "-o", "out/k.cu"],
              setup=previous_output,
              check=all_of(unchanged("out/k.cu"), absent("out/k.diff", "out/k.json"))),
        Probe("files", "SIGKILL mid-run keeps the earlier -o",
              ["x.mlir", "--cuir-interpret=Nq=2048 Nkv=2048", "-o", "y.mlir"],
              "signal", setup=previous_output, signal_after=("KILL", 0.5),
              check=unchanged("y.mlir")),
        Probe("files", "SIGINT mid-run keeps the earlier -o",
              ["x.mlir", "--cuir-interpret=Nq=2048 Nkv=2048", "-o", "y.mlir"],
              "signal", setup=previous_output, signal_after=("INT", 0.5),
              check=unchanged("y.mlir")),
        Probe("files", "SIGTERM mid-lowering leaves nothing",
              [cu, "--lift", "--lower=compile=false",
               "--cuir-interpret=Nq=2048 Nkv=2048", "-o", "new/k.cu"], "signal",
              signal_after=("TERM", 1.0), check=absent("new")),
        Probe("files", "SIGKILL mid-lowering keeps the earlier set",
              [cu, "--lift", "--lower=compile=false",
               "--cuir-interpret=Nq=2048 Nkv=2048", "-o", "out/k.cu"], "signal",
              setup=previous_output, signal_after=("KILL", 1.0),
              check=all_of(unchanged("out/k.cu"), absent("out/k.diff"))),
        Probe("files", "input does not exist", ["nosuch.mlir"]),
        Probe("files", "input is a directory", ["."]),
        Probe("files", "output is a directory",
              ["x.mlir", "-o", "."], setup=big_input, clear_location=False),
        Probe("files", "output's parent is a file",
              ["x.mlir", "-o", "x.mlir/y.mlir"], setup=big_input,
              check=parses(cuir_opt, "x.mlir"), clear_location=False),
        Probe("files", "binary garbage input", ["garbage.mlir"],
              setup=lambda d: open(os.path.join(d, "garbage.mlir"), "wb").write(
                  bytes(range(256)) * 64)),
        Probe("files", "-o x.cu without --lower",
              [cu, "--lift", "-o", "out/k.cu"], setup=previous_output,
              check=unchanged("out/k.cu"), clear_location=False),
    ]

    # Hostile input.
    P += [
        Probe("input", "5,000 nested scf.if", ["deep.mlir"],
              setup=lambda d: write(os.path.join(d, "deep.mlir"), deep_if_module(5000))),
        Probe("input", "nested attribute 100,000 deep", ["attr.mlir"],
              setup=lambda d: write(os.path.join(d, "attr.mlir"),
                                    "module attributes {a = " + nested(100000, "[", "]") + "} {}\n")),
        Probe("input", "nested type 20,000 deep", ["type.mlir"],
              setup=lambda d: write(os.path.join(d, "type.mlir"),
                                    'func.func private @f() -> ' +
                                    nested(20000, "tuple<", ">", "i32") + "\n")),
        Probe("input", "nested location 20,000 deep", ["loc.mlir"],
              setup=lambda d: write(os.path.join(d, "loc.mlir"),
                                    "module {} loc(" + nested(20000, "callsite(", ' at "a":1:1)', '"b":1:1') + ")\n")),
        Probe("input", "LLM answer 6,000 deep (replay)",
              ["unseen/flash_fwd.cu",
               "--lift=provider=replay replay-file=%s use-cache=false" % os.path.join(REPRO, "deep.jsonl"),
               "-o", "o.mlir"], setup=lambda d: unseen_copy(d)),
        Probe("input", "interpreter B=2^62", [src, "--cuir-interpret=B=4611686018427387904"]),
        Probe("input", "interpreter Nq=10^8", [src, "--cuir-interpret=Nq=100000000"]),
        Probe("input", "interpreter INT64_MAX", [src, "--cuir-interpret=Nkv=9223372036854775807"]),
        Probe("input", "interpreter negative size", [src, "--cuir-interpret=Hq=-4"]),
        Probe("input", "interpreter tolerance nan", [src, "--cuir-interpret=tolerance=nan"]),
        Probe("input", "interpreter params value 1e400",
              [src, "--transfer=softcap", "--cuir-interpret=params=softcap=1e400"]),
        Probe("input", "variant file nested 10,000 deep", [src, "--transfer=v.mlir"],
              setup=lambda d: write(os.path.join(d, "v.mlir"),
                                    "module attributes {a = " + nested(10000, "[", "]") + "} {}\n")),
        Probe("input", "empty input", ["empty.mlir"], expect="ok",
              setup=lambda d: write(os.path.join(d, "empty.mlir"), "")),
        # About the whole file: MLIR places an implicit module at file:0:0.
        Probe("input", "--lift of a .mlir module", [src, "--lift"], clear_location=False),
    ]
    for bad in ["window{", "window{window_left=abc}", "softcap{softcap=1e400}",
                "softcap{softcap=nan}", "window{window_left=-5}",
                "window{window_left=4 window_left=5}", "window{nosuch=1}",
                "prefixlm,,softcap", "{x=1}", "window{window_left=99999999999999999999}",
                "prefixlm,prefixlm", "window{window_left=1}}"]:
        P.append(Probe("input", "--transfer=" + bad, [src, "--transfer=" + bad]))

    # Secrets: a scripted server on 127.0.0.1 stands for the model and for a
    # proxy; no probe reaches the network.
    tile = os.path.join(ROOT, "test", "LLM", "Inputs", "tile_copy.cu")

    def served(answers, cmd, extra=()):
        return (["%SERVER%", "--responses", json.dumps([{"openai": "@" + x} for x in answers]),
                 "--log", "requests.log", *extra, "--"] + cmd)

    def echo_key(d):
        right = open(os.path.join(ROOT, "test", "LLM", "Inputs", "right.md")).read()
        write(os.path.join(d, "echo.md"), right.replace('loc("tile"(', 'loc("%s"(' % SECRET))
        write(os.path.join(d, "bad.md"), right.replace("cuir.barrier.sync", "cuir.barrier.sync " + SECRET))

    P += [
        Probe("secrets", "key not sent over plain http to a non-local host",
              served(["right.md"], ["env", "no_proxy=", "NO_PROXY=", "http_proxy={url}", "%CUIR%", tile,
                                    "--lift=endpoint=http://llm.example.invalid/v1 model=m check=none "
                                    "cache-dir=cache", "-o", "o.mlir"]),
              env={"OPENAI_API_KEY": SECRET},
              check=all_of(no_secret("**/*"), absent("o.mlir", "cache"), nothing_served)),
        Probe("secrets", "URL credentials never printed, cached or recorded",
              served(["right.md"], ["%CUIR%", tile,
                                    "--lift=endpoint=http://user:hunter2@127.0.0.1:{port}/v1?token=tok-probe-77 "
                                    "model=m check=none cache-dir=cache record-file=rec.jsonl", "-o", "o.mlir"]),
              expect="ok", check=no_secret("o.mlir", "cache/*", "rec.jsonl")),
        Probe("secrets", "key echoed in answers never printed, cached or written",
              served(["bad.md", "echo.md"], ["%CUIR%", tile,
                                             "--lift=endpoint={url}/v1 model=m check=none cache-dir=cache "
                                             "record-file=rec.jsonl", "-o", "o.mlir"]),
              expect="ok", setup=echo_key, env={"OPENAI_API_KEY": SECRET},
              check=no_secret("o.mlir", "cache/*", "rec.jsonl")),
    ]

    # Trust.
    P += [
        Probe("trust", "a lift that computes the wrong thing is rejected",
              ["unseen/flash_fwd.cu", "--lift=provider=replay replay-file=%s max-rounds=1 cache-dir=cache"
                             % os.path.join(REPRO, "wrong-sem.jsonl"), "-o", "w.mlir"],
              setup=unseen_copy, check=absent("cache/*.mlir", "w.mlir"), timeout=600),
    ]
    return P


def unseen_copy(d):
    os.makedirs(os.path.join(d, "unseen"), exist_ok=True)
    shutil.copy(os.path.join(SM80, "flash_fwd.cu"), os.path.join(d, "unseen"))
    shutil.copytree(os.path.join(ROOT, "kernels", "include"), os.path.join(d, "include"))
    with open(os.path.join(d, "unseen", "flash_fwd.cu"), "a") as f:
        f.write("// unseen copy\n")


def run_probe(p, cuir_opt, verbose):
    d = tempfile.mkdtemp(prefix="cuir-probe-")
    home = os.path.join(d, ".home")
    os.makedirs(home)
    try:
        if p.setup:
            p.setup(d)
        before = {}
        for dirpath, _, files in os.walk(d):
            for n in files:
                q = os.path.join(dirpath, n)
                before[os.path.relpath(q, d)] = sha(q)
        args = [a.replace("%SERVER%", SERVER).replace("%CUIR%", cuir_opt) for a in p.args]
        if args[0] == SERVER:
            cmd = [sys.executable, SERVER, "--base", os.path.join(ROOT, "test", "LLM", "Inputs")
                   if not os.path.exists(os.path.join(d, "echo.md")) else d] + args[1:]
        else:
            cmd = [cuir_opt] + args
        env = dict(os.environ, HOME=home, CUIR_LIFT_CACHE=os.path.join(home, "cache"))
        for k in list(env):
            if k.startswith("CUIR_LLM") or k.endswith("_API_KEY") or k.lower().endswith("_proxy"):
                del env[k]
        env.update(p.env)
        start = time.time()
        proc = subprocess.Popen(cmd, cwd=d, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        hang = False
        signalled = False
        if p.signal_after:
            sig, after = p.signal_after
            try:
                proc.wait(after)
            except subprocess.TimeoutExpired:
                proc.send_signal(getattr(signal, "SIG" + sig))
                signalled = True
        try:
            out, err = proc.communicate(timeout=p.timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            hang = True
        rc = proc.returncode
        out, err = out.decode(errors="replace"), err.decode(errors="replace")
        time.sleep(0.2)  # the janitor's clean-up after a killed run
        deadline = time.time() + 5
        while leftovers(d) and time.time() < deadline:
            time.sleep(0.1)
        r = {"rc": rc, "stdout": out, "stderr": err, "before": before}
        problems = {}
        interrupted = p.expect == "signal"
        if hang:
            problems["hang"] = "ran past %d s" % p.timeout
        elif not interrupted and (rc < 0 or rc >= 128 or "Stack dump" in err or
                                  "PLEASE submit a bug report" in err):
            problems["crash"] = "exit %d: %s" % (rc, err.strip()[-300:])
        left = leftovers(d)
        if left:
            problems["leftover"] = ", ".join(left)
        if not hang and not interrupted and rc != 0 and "crash" not in problems:
            if "error:" not in err or "Traceback" in err:
                problems["unclear"] = err.strip()[-300:] or "(no message)"
            elif p.clear_location and ":0:0: error:" in err and "cuir-opt: error:" not in err:
                problems["unclear"] = "located at 0:0: " + err.strip().splitlines()[0][:200]
        if p.expect == "ok" and rc != 0:
            problems["wrong"] = "failed: " + err.strip()[-300:]
        if interrupted and not signalled:
            problems["wrong"] = "ended (exit %d) before the signal" % rc
        if p.expect == "error" and rc == 0:
            problems["wrong"] = "accepted a bad input"
        if p.check and not hang:
            problem = p.check(d, r)
            if problem:
                problems["wrong"] = problem
        if verbose:
            status = "ok" if not problems else "; ".join("%s: %s" % kv for kv in problems.items())
            print("  [%s] %s (exit %s, %.1f s): %s" % (p.category, p.name, rc,
                                                      time.time() - start, status))
            if verbose > 1:
                print("    " + err.strip().replace("\n", "\n    ")[:1500])
        return problems
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cuir-opt", default=os.path.join(ROOT, "build", "bin", "cuir-opt"))
    ap.add_argument("--only", help="run one category: files, input, secrets, trust")
    ap.add_argument("-v", "--verbose", action="count", default=0)
    a = ap.parse_args()
    kinds = ["crash", "hang", "leftover", "unclear", "wrong"]
    table = {}
    for p in probes(os.path.abspath(a.cuir_opt)):
        if a.only and p.category != a.only:
            continue
        row = table.setdefault(p.category, {"probes": 0, **{k: 0 for k in kinds}})
        row["probes"] += 1
        for k in run_probe(p, os.path.abspath(a.cuir_opt), a.verbose):
            row[k] += 1
    print("| category | probes | " + " | ".join(kinds) + " |")
    print("|---|---|" + "---|" * len(kinds))
    for cat, row in table.items():
        print("| %s | %d | " % (cat, row["probes"]) +
              " | ".join(str(row[k]) for k in kinds) + " |")
    sys.exit(1 if any(row[k] for row in table.values() for k in kinds) else 0)


if __name__ == "__main__":
    main()
