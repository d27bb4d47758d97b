"""Moves the first wait for a step's tiles (`cuir.wait_group %g_cur pending 0`,
the masking loop of the first instance) of kernels/sm80/flash_bwd.cuir.mlir
below the S = Q K^T GEMM that reads Q: a misplaced wait."""
import sys

lines = open(sys.argv[1]).read().split("\n")
wait = next(i for i, l in enumerate(lines) if "cuir.wait_group %g_cur pending 0" in l)
moved = lines.pop(wait)
gemm = next(i for i in range(wait, len(lines)) if "%acc_s = cuir.gemm" in lines[i])
# The GEMM's type line follows it; put the wait after both.
lines.insert(gemm + 2, moved)
sys.stdout.write("\n".join(lines))
