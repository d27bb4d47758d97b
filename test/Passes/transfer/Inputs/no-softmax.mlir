// A kernel with a GEMM but no online softmax: nothing to transfer.
#A = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @gemm_only(%q: memref<?x?x?x64xbf16, #cuir.mem<global>> {cuir.arg = "q"},
                       %k: memref<?x?x?x64xbf16, #cuir.mem<global>> {cuir.arg = "k"},
                       %v: memref<?x?x?x64xbf16, #cuir.mem<global>> {cuir.arg = "v"},
                       %o: memref<?x?x?x64xbf16, #cuir.mem<global>> {cuir.arg = "o"},
                       %n: index {cuir.arg = "Nq"})
    grid (n) -> (n) threads 128 arch "sm_80" {
  %a = cuir.alloc : memref<64x64xbf16, #cuir.mem<shared>>
  %z = arith.constant dense<0.0> : tensor<64x64xf32, #ACC>
  %s = cuir.gemm %a, %a transpose_b, %z
      : memref<64x64xbf16, #cuir.mem<shared>>, memref<64x64xbf16, #cuir.mem<shared>>, tensor<64x64xf32, #ACC>
  cuir.return
}
