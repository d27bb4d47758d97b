// An async copy from rows or columns outside its source (negative ones
// included) fills the destination's elements there with zeros, as a copy
// past the end does, and marks only the elements inside the view in flight.
// RUN: not cuir-opt %s --cuir-interpret="Nq=64 Nkv=64 d=16" -o /dev/null 2>&1 | FileCheck %s
// CHECK-NOT: PLEASE submit a bug report
// CHECK: error: output mismatch: @neg_row
// CHECK-SAME: the kernel wrote no output element
#A = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @neg_row(%Q: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "q"},
                     %O: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "o"},
                     %n: index {cuir.arg = "Nq"})
    grid (n) -> (1) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %cm = arith.constant -64 : index
  %rows = memref.subview %Q[0, 0, 0, 0] [1, %n, 1, 16] [1, 1, 1, 1]
      : memref<?x?x?x16xbf16, #cuir.mem<global>> to memref<?x16xbf16, strided<[?, 1]>, #cuir.mem<global>>
  %s = cuir.alloc : memref<64x16xbf16, #cuir.mem<shared>>
  %t = cuir.copy_async cp_async %rows[%cm, %c0] -> %s
      : memref<?x16xbf16, strided<[?, 1]>, #cuir.mem<global>> -> memref<64x16xbf16, #cuir.mem<shared>> -> !cuir.token
  %g = cuir.commit %t
  cuir.wait_group %g pending 0
  cuir.return
}
