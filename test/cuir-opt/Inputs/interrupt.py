"""Interrupts a command mid-run and reports what it left in a directory.

    interrupt.py --signal KILL --dir D [--wait-for-file] [--ignored] -- cmd...

Starts the command, waits until D holds a staged temporary (a name starting
with '.', and with --wait-for-file one holding a file), sends the signal
(with --ignored, one the command starts with ignored), waits for the command to end and for its cleaner to finish (up to 10 s),
then prints 'exit: <how it ended>' and 'left: <name>' for each entry of D
that was not there before, and 'kept: <name> <sha256>' for the others.
"""
import argparse
import hashlib
import os
import signal
import subprocess
import sys
import time


def staged(d, want_file):
    for name in os.listdir(d):
        if not name.startswith("."):
            continue
        p = os.path.join(d, name)
        if not want_file or os.path.isfile(p):
            return True
        for _, _, files in os.walk(p):
            if files:
                return True
    return False


def digest(p):
    if os.path.isdir(p):
        return "dir"
    with open(p, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--signal", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--wait-for-file", action="store_true")
    ap.add_argument("--ignored", action="store_true")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    before = set(os.listdir(a.dir))
    # lit's workers ignore SIGINT, and a child inherits that: give the
    # command the default action a terminal's Ctrl-C meets, or with
    # --ignored the signal ignored, as nohup does.
    sig = getattr(signal, "SIG" + a.signal)
    action = signal.SIG_IGN if a.ignored else signal.SIG_DFL
    def set_actions():
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if sig != signal.SIGKILL:
            signal.signal(sig, action)

    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, preexec_fn=set_actions)
    deadline = time.time() + 120
    while proc.poll() is None and not staged(a.dir, a.wait_for_file):
        if time.time() > deadline:
            proc.kill()
            sys.exit("interrupt.py: nothing was staged within 120 s")
        time.sleep(0.01)
    if proc.poll() is not None:
        sys.exit("interrupt.py: the command ended before it was interrupted")
    proc.send_signal(sig)
    rc = proc.wait()
    print("exit: signal %s" % signal.Signals(-rc).name if rc < 0 else
          "exit: %d" % rc)
    # The janitor cleans up after the process is gone.
    end = time.time() + 10
    while time.time() < end and set(os.listdir(a.dir)) - before:
        time.sleep(0.05)
    for name in sorted(os.listdir(a.dir)):
        p = os.path.join(a.dir, name)
        print(("kept: %s %s" % (name, digest(p))) if name in before else
              "left: " + name)


if __name__ == "__main__":
    main()
