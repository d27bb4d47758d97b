// RUN: not cuir-opt %s --cuir-interpret="Nq=1 Nkv=1 d=16" -o /dev/null 2>&1 | FileCheck %s
//
// A load outside a captured tensor is an error at the load, naming the
// whole index and the shape (PyTorch would raise; the kernel would read
// past the buffer).
// CHECK: tensor-load-out-of-bounds.mlir:[[@LINE+12]]:8: error: loads index [1, 3] of a memref of shape [2, 3]: index 3 of dimension 1 is outside [0, 3)

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [1, 1]>
!o = memref<?x?x?x16xbf16, strided<[?, ?, ?, 1]>, #cuir.mem<global>>
!rows = memref<?x16xbf16, strided<[?, 1], offset: ?>, #cuir.mem<global>>
!t = memref<2x3xf32, #cuir.mem<global>>
cuir.kernel @oob(%O: !o {cuir.arg = "o"}, %n: index {cuir.arg = "Nq"},
                 %t: !t {cuir.arg = "param:t", cuir.default = dense<1.0> : tensor<2x3xf32>})
    grid (n) -> (1) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %a = memref.load %t[%c1, %c3] : !t
  %flag = arith.truncf %a : f32 to bf16
  %tile = tensor.splat %flag : tensor<16x16xbf16, #ACC>
  %rows = memref.subview %O[%c0, 0, %c0, 0] [1, %n, 1, 16] [1, 1, 1, 1]
      : !o to !rows
  cuir.store %tile -> %rows[%c0, %c0] : tensor<16x16xbf16, #ACC> -> !rows
  cuir.return
}
