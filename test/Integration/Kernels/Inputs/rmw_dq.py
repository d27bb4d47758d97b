"""Replaces the dQ reduction of kernels/sm80/flash_bwd.cuir.mlir
(`cuir.atomic_add %acc_dq -> %dq_head[...]`) by a plain read-modify-write:
the accumulator tile copied to shared memory (with the barrier its reads by
other threads need), added to, stored back."""
import re
import sys

ADD = re.compile(r"^(\s*)cuir\.atomic_add %acc_dq -> %dq_head\[%q_row0, %c0\] : "
                 r"(tensor<64x(\d+)xf32, #ACC_DQ>) -> (memref<[^>]*>, #G>)")


def rmw(m):
    ind, tile, d, view = m.group(1), m.group(2), m.group(3), m.group(4)
    smem = f"memref<64x{d}xf32, #S>"
    return "\n".join([
        f"{ind}%sAcc = cuir.alloc : {smem}",
        f"{ind}cuir.copy %dq_head[%q_row0, %c0] -> %sAcc : {view} -> {smem}",
        f"{ind}cuir.barrier.sync",
        f"{ind}%old = cuir.load %sAcc : {smem} -> {tile}",
        f"{ind}%sum = arith.addf %old, %acc_dq : {tile}",
        f"{ind}cuir.store %sum -> %dq_head[%q_row0, %c0] : {tile} -> {view}"])


out = [ADD.sub(rmw, line) for line in open(sys.argv[1]).read().split("\n")]
sys.stdout.write("\n".join(out))
