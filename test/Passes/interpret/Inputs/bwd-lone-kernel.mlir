// A backward kernel in no cuir.launch_sequence: it runs as a sequence of
// one. It writes zeros into dq, dk and dv (one 64-row tile of each), so
// its gradients are wrong wherever the reference's are not 0.
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
!seq  = memref<?x?x?x16xbf16, #cuir.mem<global>>
!rows = memref<?x16xbf16, strided<[?, 1]>, #cuir.mem<global>>
cuir.kernel @zero_grads(%dQ: !seq {cuir.arg = "dq"}, %dK: !seq {cuir.arg = "dk"},
                        %dV: !seq {cuir.arg = "dv"}, %Nq: index {cuir.arg = "Nq"},
                        %Nkv: index {cuir.arg = "Nkv"})
    grid (nq, nkv) -> (1) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %z = arith.constant dense<0.0> : tensor<64x16xbf16, #ACC>
  %q_rows = memref.subview %dQ[0, 0, 0, 0] [1, %Nq, 1, 16] [1, 1, 1, 1] : !seq to !rows
  %k_rows = memref.subview %dK[0, 0, 0, 0] [1, %Nkv, 1, 16] [1, 1, 1, 1] : !seq to !rows
  %v_rows = memref.subview %dV[0, 0, 0, 0] [1, %Nkv, 1, 16] [1, 1, 1, 1] : !seq to !rows
  cuir.store %z -> %q_rows[%c0, %c0] : tensor<64x16xbf16, #ACC> -> !rows
  cuir.store %z -> %k_rows[%c0, %c0] : tensor<64x16xbf16, #ACC> -> !rows
  cuir.store %z -> %v_rows[%c0, %c0] : tensor<64x16xbf16, #ACC> -> !rows
  cuir.return
}
