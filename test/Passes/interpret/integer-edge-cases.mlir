// RUN: not cuir-opt %s --cuir-interpret="Nq=1 Nkv=1 d=16" -o /dev/null 2>&1 | FileCheck %s
//
// Integer ops whose C++ form would trap or be undefined compute what two's
// complement hardware computes, never a crash: INT64_MIN / -1 wraps (the
// CPU's idiv would raise SIGFPE), sums and products wrap, a shift by the
// width or more shifts everything out, fptosi of NaN is 0. The kernel
// writes 1 to every element of its output if all of them hold, 0 otherwise;
// the interpreter then reports the (expected) mismatch with the reference
// and the value the kernel wrote.
// CHECK: error: output mismatch: {{.*}} first mismatch at (b=0, q=0, h=0, c=0): got 1, expected

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [1, 1]>
!o = memref<?x?x?x16xbf16, strided<[?, ?, ?, 1]>, #cuir.mem<global>>
!rows = memref<?x16xbf16, strided<[?, 1], offset: ?>, #cuir.mem<global>>
cuir.kernel @edges(%O: !o {cuir.arg = "o"}, %n: index {cuir.arg = "Nq"})
    grid (n) -> (1) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %min = arith.constant -9223372036854775808 : index
  %max = arith.constant 9223372036854775807 : index
  %m1 = arith.constant -1 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %m8 = arith.constant -8 : index
  %m2 = arith.constant -2 : index
  %nan = arith.constant 0x7FC00000 : f32

  %div = arith.divsi %min, %m1 : index
  %rem = arith.remsi %min, %m1 : index
  %floor = arith.floordivsi %min, %m1 : index
  %ceil = arith.ceildivsi %min, %m1 : index
  %sum = arith.addi %max, %c1 : index
  %prod = arith.muli %max, %c2 : index
  %shl = arith.shli %m1, %c64 : index
  %shrs = arith.shrsi %m8, %c64 : index
  %shru = arith.shrui %m8, %c64 : index
  %fp = arith.fptosi %nan : f32 to i32

  %e0 = arith.cmpi eq, %div, %min : index
  %e1 = arith.cmpi eq, %rem, %c0 : index
  %e2 = arith.cmpi eq, %floor, %min : index
  %e3 = arith.cmpi eq, %ceil, %min : index
  %e4 = arith.cmpi eq, %sum, %min : index
  %e5 = arith.cmpi eq, %prod, %m2 : index
  %e6 = arith.cmpi eq, %shl, %c0 : index
  %e7 = arith.cmpi eq, %shrs, %m1 : index
  %e8 = arith.cmpi eq, %shru, %c0 : index
  %fpi = arith.index_cast %fp : i32 to index
  %e9 = arith.cmpi eq, %fpi, %c0 : index
  %a0 = arith.andi %e0, %e1 : i1
  %a1 = arith.andi %a0, %e2 : i1
  %a2 = arith.andi %a1, %e3 : i1
  %a3 = arith.andi %a2, %e4 : i1
  %a4 = arith.andi %a3, %e5 : i1
  %a5 = arith.andi %a4, %e6 : i1
  %a6 = arith.andi %a5, %e7 : i1
  %a7 = arith.andi %a6, %e8 : i1
  %all = arith.andi %a7, %e9 : i1

  %one = arith.constant 1.0 : bf16
  %zero = arith.constant 0.0 : bf16
  %flag = arith.select %all, %one, %zero : bf16
  %tile = tensor.splat %flag : tensor<16x16xbf16, #ACC>
  %rows = memref.subview %O[%c0, 0, %c0, 0] [1, %n, 1, 16] [1, 1, 1, 1]
      : !o to !rows
  cuir.store %tile -> %rows[%c0, %c0] : tensor<16x16xbf16, #ACC> -> !rows
  cuir.return
}
