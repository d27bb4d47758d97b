"""Moves, at every line that contains FIRST, that line and the COUNT - 1 lines
after it to just after the next line that contains AFTER: an access moved past
the barrier that should order it. Usage: move_lines.py FILE FIRST COUNT AFTER."""
import sys

path, first, count, after = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
lines = open(path).read().split("\n")
moved, i = 0, 0
while i < len(lines):
    if first in lines[i]:
        block = lines[i:i + count]
        del lines[i:i + count]
        j = next((k for k in range(i, len(lines)) if after in lines[k]), None)
        if j is None:
            sys.exit(f"move_lines.py: no line after line {i + 1} contains {after!r}")
        lines[j + 1:j + 1] = block
        moved += 1
        i = j + 1 + count
    else:
        i += 1
if not moved:
    sys.exit(f"move_lines.py: no line contains {first!r}")
sys.stdout.write("\n".join(lines))
