// The interpreter binds a captured tensor (a static 2-D parameter) from its
// dense cuir.default, or from params= as a nested list, a flat row-major
// list or one number. The kernel writes t[1, 2] - t[0, 1] to its output: the
// interpreter then reports the (expected) mismatch with the random
// reference and the value the kernel wrote.
// RUN: not cuir-opt %s --cuir-interpret="Nq=1 Nkv=1 d=16" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEFAULT
// DEFAULT: got 9, expected
// RUN: not cuir-opt %s --cuir-interpret="Nq=1 Nkv=1 d=16 params=t=[[0,-3,0],[0,0,4]]" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NESTED
// NESTED: got 7, expected
// RUN: not cuir-opt %s --cuir-interpret="Nq=1 Nkv=1 d=16 params=t=0,5,0,0,0,-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FLAT
// FLAT: got -6, expected
// RUN: not cuir-opt %s --cuir-interpret="Nq=1 Nkv=1 d=16 params=t=3" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BROADCAST
// BROADCAST: got 0, expected
// RUN: not cuir-opt %s --cuir-interpret="Nq=1 Nkv=1 d=16 params=t=[[0,1],[2,3]]" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: error: parameter 't' of shape [2, 3]: dimension 1 has 2 element(s) where the shape needs 3
// RUN: not cuir-opt %s --cuir-interpret="Nq=1 Nkv=1 d=16 params=t=[[0,1,2],[2,3,4294967296]]" -o /dev/null 2>&1 | FileCheck %s --check-prefix=RANGE
// RANGE: error: parameter 't' of shape [2, 3]: '4294967296' is out of the range of i32
// RUN: not cuir-opt %s --cuir-interpret="Nq=1 Nkv=1 d=16 params=t=1,2,3" -o /dev/null 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: error: parameter 't' needs 6 value(s), got 3

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [1, 1]>
!o = memref<?x?x?x16xbf16, strided<[?, ?, ?, 1]>, #cuir.mem<global>>
!rows = memref<?x16xbf16, strided<[?, 1], offset: ?>, #cuir.mem<global>>
!t = memref<2x3xi32, #cuir.mem<global>>
cuir.kernel @tensor(%O: !o {cuir.arg = "o"}, %n: index {cuir.arg = "Nq"},
                    %t: !t {cuir.arg = "param:t", cuir.default = dense<[[1, -2, 3], [4, 5, 7]]> : tensor<2x3xi32>})
    grid (n) -> (1) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %a = memref.load %t[%c1, %c2] : !t
  %b = memref.load %t[%c0, %c1] : !t
  %d = arith.subi %a, %b : i32
  %flag = arith.sitofp %d : i32 to bf16
  %tile = tensor.splat %flag : tensor<16x16xbf16, #ACC>
  %rows = memref.subview %O[%c0, 0, %c0, 0] [1, %n, 1, 16] [1, 1, 1, 1]
      : !o to !rows
  cuir.store %tile -> %rows[%c0, %c0] : tensor<16x16xbf16, #ACC> -> !rows
  cuir.return
}
