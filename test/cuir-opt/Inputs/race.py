"""Races writers for one output and checks what is left after each trial.

    race.py --writers N --trials T --check "cmd" -- "writer 1" "writer 2" ...

Each trial starts N writers at once (taking the given commands in turn), waits
for all of them, then runs the check command. Prints 'FAIL ...' for a writer
that failed or a check that did not pass, and a summary line.
"""
import argparse
import shlex
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--writers", type=int, required=True)
    ap.add_argument("--trials", type=int, required=True)
    ap.add_argument("--check", required=True)
    ap.add_argument("cmds", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmds = a.cmds[1:] if a.cmds and a.cmds[0] == "--" else a.cmds
    failed = False
    for trial in range(a.trials):
        procs = [subprocess.Popen(shlex.split(cmds[i % len(cmds)]),
                                  stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE)
                 for i in range(a.writers)]
        for i, p in enumerate(procs):
            _, err = p.communicate()
            if p.returncode != 0:
                failed = True
                print("FAIL trial %d writer %d: exit %d\n%s" %
                      (trial, i, p.returncode, err.decode(errors="replace")))
        check = subprocess.run(shlex.split(a.check), capture_output=True,
                               text=True)
        if check.returncode != 0:
            failed = True
            print("FAIL trial %d check: %s%s" % (trial, check.stdout,
                                                 check.stderr))
    if not failed:
        print("race: %d trials, every writer succeeded, every check passed" %
              a.trials)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
