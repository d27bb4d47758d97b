"""Moves the first wait for V (`cuir.wait_group %gv_cur pending 2`) of the
masking loop below the P V GEMM that reads V: a misplaced wait."""
import sys

lines = open(sys.argv[1]).read().split("\n")
wait = next(i for i, l in enumerate(lines) if "cuir.wait_group %gv_cur pending 2" in l)
moved = lines.pop(wait)
gemm = next(i for i in range(wait, len(lines)) if "%acc_o_new = cuir.gemm" in lines[i])
# The GEMM's type line follows it; put the wait after both.
lines.insert(gemm + 2, moved)
sys.stdout.write("\n".join(lines))
