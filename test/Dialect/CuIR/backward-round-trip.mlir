// RUN: cuir-opt %s | FileCheck %s
// RUN: cuir-opt %s | cuir-opt | FileCheck %s
// RUN: cuir-opt %s --mlir-print-op-generic | cuir-opt | FileCheck %s
//
// The backward pass's ops and attributes: cuir.atomic_add, workspaces with
// their cuir.shape, and cuir.launch_sequence.

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
!acc = memref<?x?x?x16xf32, #cuir.mem<global>>
!seq = memref<?x?x?x16xbf16, #cuir.mem<global>>

// CHECK: cuir.launch_sequence @bwd [@acc, @acc]
cuir.launch_sequence @bwd [@acc, @acc]

// CHECK-LABEL: cuir.kernel @acc
// CHECK-SAME: cuir.arg = "workspace:dq_accum", cuir.shape = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, (d3 ceildiv 64) * 64, d1, d5)>
cuir.kernel @acc(%ws: !acc {cuir.arg = "workspace:dq_accum",
                            cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, (nq ceildiv 64) * 64, hq, d)>},
                 %dq: !seq {cuir.arg = "dq"}, %dk: !seq {cuir.arg = "dk"},
                 %dv: !seq {cuir.arg = "dv"}, %n: index {cuir.arg = "Nq"})
    grid (n) -> (1) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %t = arith.constant dense<1.0> : tensor<64x16xf32, #ACC>
  %rows = memref.subview %ws[0, 0, 0, 0] [1, %n, 1, 16] [1, 1, 1, 1]
      : !acc to memref<?x16xf32, strided<[?, 1]>, #cuir.mem<global>>
  // CHECK: cuir.atomic_add %{{.*}} -> %{{.*}}[%{{.*}}, %{{.*}}] : tensor<64x16xf32, #{{.*}}> -> memref<?x16xf32, strided<[?, 1]>, #{{.*}}>
  cuir.atomic_add %t -> %rows[%c0, %c0]
      : tensor<64x16xf32, #ACC> -> memref<?x16xf32, strided<[?, 1]>, #cuir.mem<global>>
  cuir.return
}
