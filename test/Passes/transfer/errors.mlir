// RUN: cuir-opt %s -split-input-file --transfer=causal -verify-diagnostics
//
// Kernels whose attention structure the transfer cannot find are errors at
// the op that lacks it.

!g = memref<?x?x?x16xbf16, #cuir.mem<global>>
// expected-error @below {{has no parameter with role 'q' ({cuir.arg = "q"}): transfer needs to know the attention's operands}}
cuir.kernel @no_roles(%Q: !g, %n: index {cuir.arg = "Nq"})
    grid (n) -> (n) threads 128 arch "sm_80" {
  cuir.return
}

// -----

// A kernel transferred already: a second --transfer would apply a variant
// to Target CuIR.
!g = memref<?x?x?x16xbf16, #cuir.mem<global>>
// expected-error @below {{already computes the variant 'prefixlm'; transfer the source kernel once, with a composition such as --transfer=prefixlm,causal}}
cuir.kernel @twice(%Q: !g {cuir.arg = "q"}, %n: index {cuir.arg = "Nq"})
    grid (n) -> (n) threads 128 arch "sm_80" attributes {cuir.variant = "prefixlm"} {
  cuir.return
}

// -----

// A GEMM, but no online softmax.
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
!g = memref<?x?x?x16xbf16, #cuir.mem<global>>
!t = memref<64x16xbf16, #cuir.mem<shared>>
// expected-error @below {{has no score GEMM feeding a row maximum (an online softmax): cannot find the attention structure to transfer}}
cuir.kernel @gemm_only(%Q: !g {cuir.arg = "q"}, %K: !g {cuir.arg = "k"},
                       %V: !g {cuir.arg = "v"}, %O: !g {cuir.arg = "o"},
                       %n: index {cuir.arg = "Nq"})
    grid (n) -> (n) threads 128 arch "sm_80" {
  %a = cuir.alloc : !t
  %z = arith.constant dense<0.0> : tensor<64x64xf32, #ACC>
  %s = cuir.gemm %a, %a transpose_b, %z : !t, !t, tensor<64x64xf32, #ACC>
  cuir.return
}

// -----

// The score tile outside any loop over key/value blocks.
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#ROW = #cuir.frag<row, mma_m16n8k16, warps = [4, 1]>
!g = memref<?x?x?x16xbf16, #cuir.mem<global>>
!t = memref<64x16xbf16, #cuir.mem<shared>>
cuir.kernel @no_loop(%Q: !g {cuir.arg = "q"}, %K: !g {cuir.arg = "k"},
                     %V: !g {cuir.arg = "v"}, %O: !g {cuir.arg = "o"},
                     %n: index {cuir.arg = "Nq"})
    grid (n) -> (n) threads 128 arch "sm_80" {
  %a = cuir.alloc : !t
  %z = arith.constant dense<0.0> : tensor<64x64xf32, #ACC>
  // expected-error @below {{computes a score tile outside any loop over key/value blocks; transfer expects the score GEMM inside an scf.for}}
  %s = cuir.gemm %a, %a transpose_b, %z : !t, !t, tensor<64x64xf32, #ACC>
  %m = cuir.reduce_rows max %s : tensor<64x64xf32, #ACC> -> tensor<64xf32, #ROW>
  cuir.return
}

// -----

// K read from a buffer that is no stage of a ring: which key/value block
// the tile holds is unknown.
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#ROW = #cuir.frag<row, mma_m16n8k16, warps = [4, 1]>
!g = memref<?x?x?x16xbf16, #cuir.mem<global>>
!t = memref<64x16xbf16, #cuir.mem<shared>>
cuir.kernel @no_ring(%Q: !g {cuir.arg = "q"}, %K: !g {cuir.arg = "k"},
                     %V: !g {cuir.arg = "v"}, %O: !g {cuir.arg = "o"},
                     %n: index {cuir.arg = "Nq"})
    grid (n) -> (n) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = cuir.alloc : !t
  %z = arith.constant dense<0.0> : tensor<64x64xf32, #ACC>
  scf.for %j = %c0 to %n step %c1 {
    // expected-error @below {{reads K from a buffer whose key/value block cannot be determined: expected a memref.subview of a shared ring at stage 'n mod stages' (arith.remui)}}
    %s = cuir.gemm %a, %a transpose_b, %z : !t, !t, tensor<64x64xf32, #ACC>
    %m = cuir.reduce_rows max %s : tensor<64x64xf32, #ACC> -> tensor<64xf32, #ROW>
  }
  cuir.return
}
