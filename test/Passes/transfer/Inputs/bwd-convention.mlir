// The hand-written backward of ../../interpret/Inputs/bwd-kernel.mlir with
// the score, weight and dS arithmetic at tile level, as the Source CuIR of
// kernels/sm80/flash_bwd.cu writes it (the convention the backward
// transfer reads, lib/Transfer/BackwardAnalysis.cpp):
//   S = cuir.gemm (unscaled), the kernel's mask as one cuir.elementwise,
//   P = exp2(fma(S, scale * log2 e, -LSE * log2 e)),
//   dS = P * (dP - D).
// LSE and D rows come through shared memory. Rows past Nq read zeros
// (P = exp2(0) there, dP = 0 and D = 0: no contribution). Inputs must give
// every row a visible key (Nq <= Nkv under the causal mask).

#A   = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#ROW = #cuir.frag<row, mma_m16n8k16, warps = [4, 1]>
#G   = #cuir.mem<global>
#S   = #cuir.mem<shared>
!seq   = memref<?x?x?x16xbf16, #G>
!rows  = memref<?x16xbf16, strided<[?, 1], offset: ?>, #G>
!stat  = memref<?x?x?xf32, #G>
!srow  = memref<?xf32, strided<[1], offset: ?>, #G>
!acc   = memref<?x?x?x16xf32, #G>
!arows = memref<?x16xf32, strided<[?, 1], offset: ?>, #G>
!tile  = memref<64x16xbf16, #S>
!ptile = memref<64x64xbf16, #S>
!rtile = memref<64xf32, #S>

cuir.launch_sequence @flash_bwd [@bwd_preprocess, @bwd_main, @bwd_convert]

cuir.kernel @bwd_preprocess(
    %O: !seq {cuir.arg = "o"}, %dO: !seq {cuir.arg = "d_o"},
    %Dws: !stat {cuir.arg = "workspace:d",
                 cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, nq)>},
    %dQacc: !acc {cuir.arg = "workspace:dq_accum",
                  cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, nq, hq, d)>},
    %B: index {cuir.arg = "B"}, %Hq: index {cuir.arg = "Hq"},
    %Hkv: index {cuir.arg = "Hkv"}, %Nq: index {cuir.arg = "Nq"},
    %Nkv: index {cuir.arg = "Nkv"})
    grid (b, hq, hkv, nq, nkv) -> (nq ceildiv 64, hq, b)
    threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m = cuir.block_id x
  %h = cuir.block_id y
  %b = cuir.block_id z
  %q0 = arith.muli %m, %c64 : index
  %o_rows = memref.subview %O[%b, 0, %h, 0] [1, %Nq, 1, 16] [1, 1, 1, 1] : !seq to !rows
  %do_rows = memref.subview %dO[%b, 0, %h, 0] [1, %Nq, 1, 16] [1, 1, 1, 1] : !seq to !rows
  %sO = cuir.alloc : !tile
  %sdO = cuir.alloc : !tile
  %to = cuir.copy_async cp_async %o_rows[%q0, %c0] -> %sO : !rows -> !tile -> !cuir.token
  %tdo = cuir.copy_async cp_async %do_rows[%q0, %c0] -> %sdO : !rows -> !tile -> !cuir.token
  %g = cuir.commit %to, %tdo
  cuir.wait_group %g pending 0
  cuir.barrier.sync
  %o = cuir.load %sO : !tile -> tensor<64x16xbf16, #ACC>
  %do = cuir.load %sdO : !tile -> tensor<64x16xbf16, #ACC>
  %of = arith.extf %o : tensor<64x16xbf16, #ACC> to tensor<64x16xf32, #ACC>
  %dof = arith.extf %do : tensor<64x16xbf16, #ACC> to tensor<64x16xf32, #ACC>
  %prod = arith.mulf %of, %dof : tensor<64x16xf32, #ACC>
  %D = cuir.reduce_rows sum %prod : tensor<64x16xf32, #ACC> -> tensor<64xf32, #ROW>
  %d_row = memref.subview %Dws[%b, %h, 0] [1, 1, %Nq] [1, 1, 1] : !stat to !srow
  cuir.store %D -> %d_row[%q0] : tensor<64xf32, #ROW> -> !srow
  // The accumulator's contents on entry do not matter: zero this tile.
  %zero = arith.constant dense<0.0> : tensor<64x16xf32, #ACC>
  %acc_rows = memref.subview %dQacc[%b, 0, %h, 0] [1, %Nq, 1, 16] [1, 1, 1, 1] : !acc to !arows
  cuir.store %zero -> %acc_rows[%q0, %c0] : tensor<64x16xf32, #ACC> -> !arows
  cuir.return
}

cuir.kernel @bwd_main(
    %Q: !seq {cuir.arg = "q"}, %K: !seq {cuir.arg = "k"},
    %V: !seq {cuir.arg = "v"}, %dO: !seq {cuir.arg = "d_o"},
    %LSE: !stat {cuir.arg = "lse"},
    %Dws: !stat {cuir.arg = "workspace:d",
                 cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, nq)>},
    %dQacc: !acc {cuir.arg = "workspace:dq_accum",
                  cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, nq, hq, d)>},
    %dK: !seq {cuir.arg = "dk"}, %dV: !seq {cuir.arg = "dv"},
    %scale: f32 {cuir.arg = "softmax_scale"}, %causal: i1 {cuir.arg = "causal"},
    %B: index {cuir.arg = "B"}, %Hq: index {cuir.arg = "Hq"},
    %Hkv: index {cuir.arg = "Hkv"}, %Nq: index {cuir.arg = "Nq"},
    %Nkv: index {cuir.arg = "Nkv"})
    grid (b, hq, hkv, nq, nkv) -> (nkv ceildiv 64, hkv, b)
    threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %true = arith.constant true
  %fzero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %pinf = arith.constant 0x7F800000 : f32
  %n = cuir.block_id x
  %hk = cuir.block_id y
  %b = cuir.block_id z
  %kv0 = arith.muli %n, %c64 : index
  %group = arith.divui %Hq, %Hkv : index
  %h0 = arith.muli %hk, %group : index
  %h_end = arith.addi %h0, %group : index
  %QB = arith.ceildivui %Nq, %c64 : index
  %last_q = arith.subi %Nq, %c1 : index
  %k_rows = memref.subview %K[%b, 0, %hk, 0] [1, %Nkv, 1, 16] [1, 1, 1, 1] : !seq to !rows
  %v_rows = memref.subview %V[%b, 0, %hk, 0] [1, %Nkv, 1, 16] [1, 1, 1, 1] : !seq to !rows
  %sK = cuir.alloc : !tile
  %sV = cuir.alloc : !tile
  %sQ = cuir.alloc : !tile
  %sdO = cuir.alloc : !tile
  %sP = cuir.alloc : !ptile
  %sdS = cuir.alloc : !ptile
  %sL = cuir.alloc : !rtile
  %sD = cuir.alloc : !rtile
  %log2e = arith.constant 1.44269502 : f32
  %scale_log2 = arith.mulf %scale, %log2e : f32
  %scale_tile = tensor.splat %scale_log2 : tensor<64x64xf32, #ACC>
  %log2e_row = tensor.splat %log2e : tensor<64xf32, #ROW>
  %tk = cuir.copy_async cp_async %k_rows[%kv0, %c0] -> %sK : !rows -> !tile -> !cuir.token
  %tv = cuir.copy_async cp_async %v_rows[%kv0, %c0] -> %sV : !rows -> !tile -> !cuir.token
  %gkv = cuir.commit %tk, %tv
  cuir.wait_group %gkv pending 0
  cuir.barrier.sync

  %zero16 = arith.constant dense<0.0> : tensor<64x16xf32, #ACC>
  %zero64 = arith.constant dense<0.0> : tensor<64x64xf32, #ACC>
  %dk_acc, %dv_acc = scf.for %h = %h0 to %h_end step %c1
      iter_args(%dk_h = %zero16, %dv_h = %zero16)
      -> (tensor<64x16xf32, #ACC>, tensor<64x16xf32, #ACC>) {
    %q_rows = memref.subview %Q[%b, 0, %h, 0] [1, %Nq, 1, 16] [1, 1, 1, 1] : !seq to !rows
    %do_rows = memref.subview %dO[%b, 0, %h, 0] [1, %Nq, 1, 16] [1, 1, 1, 1] : !seq to !rows
    %acc_rows = memref.subview %dQacc[%b, 0, %h, 0] [1, %Nq, 1, 16] [1, 1, 1, 1] : !acc to !arows
    %lse_rows = memref.subview %LSE[%b, %h, 0] [1, 1, %Nq] [1, 1, 1] : !stat to !srow
    %d_rows = memref.subview %Dws[%b, %h, 0] [1, 1, %Nq] [1, 1, 1] : !stat to !srow
    %dk_m, %dv_m = scf.for %m = %c0 to %QB step %c1
        iter_args(%dk_i = %dk_h, %dv_i = %dv_h)
        -> (tensor<64x16xf32, #ACC>, tensor<64x16xf32, #ACC>) {
      %q0 = arith.muli %m, %c64 : index
      %tq = cuir.copy_async cp_async %q_rows[%q0, %c0] -> %sQ : !rows -> !tile -> !cuir.token
      %tdo = cuir.copy_async cp_async %do_rows[%q0, %c0] -> %sdO : !rows -> !tile -> !cuir.token
      %tl = cuir.copy_async cp_async %lse_rows[%q0] -> %sL : !srow -> !rtile -> !cuir.token
      %td = cuir.copy_async cp_async %d_rows[%q0] -> %sD : !srow -> !rtile -> !cuir.token
      %gq = cuir.commit %tq, %tdo, %tl, %td
      cuir.wait_group %gq pending 0
      cuir.barrier.sync
      %q = cuir.load %sQ : !tile -> tensor<64x16xbf16, #A>
      %do = cuir.load %sdO : !tile -> tensor<64x16xbf16, #A>

      %s = cuir.gemm %q, %sK transpose_b, %zero64
          : tensor<64x16xbf16, #A>, !tile, tensor<64x64xf32, #ACC>
      %sm = cuir.elementwise (%s) at [%b, %h, %q0, %kv0]
          : (tensor<64x64xf32, #ACC>) -> tensor<64x64xf32, #ACC> {
      ^bb0(%x: f32, %bi: index, %hi: index, %qi: index, %ki: index):
        %off = arith.subi %Nkv, %Nq : index
        %diag = arith.addi %qi, %off : index
        %past_diag = arith.cmpi sgt, %ki, %diag : index
        %hides = arith.andi %causal, %past_diag : i1
        %past_end = arith.cmpi sge, %ki, %Nkv : index
        %hidden = arith.ori %past_end, %hides : i1
        %r = arith.select %hidden, %ninf, %x : f32
        cuir.yield %r : f32
      }
      %lse = cuir.load %sL : !rtile -> tensor<64xf32, #ROW>
      %lse2 = arith.mulf %lse, %log2e_row : tensor<64xf32, #ROW>
      %lse_b = cuir.broadcast_rows %lse2 : tensor<64xf32, #ROW> -> tensor<64x64xf32, #ACC>
      %neg_lse = arith.negf %lse_b : tensor<64x64xf32, #ACC>
      %logits = math.fma %sm, %scale_tile, %neg_lse : tensor<64x64xf32, #ACC>
      %p = math.exp2 %logits : tensor<64x64xf32, #ACC>
      %dp = cuir.gemm %do, %sV transpose_b, %zero64
          : tensor<64x16xbf16, #A>, !tile, tensor<64x64xf32, #ACC>
      %Dr = cuir.load %sD : !rtile -> tensor<64xf32, #ROW>
      %D_b = cuir.broadcast_rows %Dr : tensor<64xf32, #ROW> -> tensor<64x64xf32, #ACC>
      %dp_d = arith.subf %dp, %D_b : tensor<64x64xf32, #ACC>
      %ds = arith.mulf %p, %dp_d : tensor<64x64xf32, #ACC>

      // P and dS through shared memory, read back transposed for dV, dK.
      %p16 = arith.truncf %p : tensor<64x64xf32, #ACC> to tensor<64x64xbf16, #ACC>
      %ds16 = arith.truncf %ds : tensor<64x64xf32, #ACC> to tensor<64x64xbf16, #ACC>
      cuir.store %p16 -> %sP : tensor<64x64xbf16, #ACC> -> !ptile
      cuir.store %ds16 -> %sdS : tensor<64x64xbf16, #ACC> -> !ptile
      cuir.barrier.sync
      %pt = cuir.load %sP transpose : !ptile -> tensor<64x64xbf16, #A>
      %dst = cuir.load %sdS transpose : !ptile -> tensor<64x64xbf16, #A>
      %dv_n = cuir.gemm %pt, %sdO, %dv_i
          : tensor<64x64xbf16, #A>, !tile, tensor<64x16xf32, #ACC>
      %dk_n = cuir.gemm %dst, %sQ, %dk_i
          : tensor<64x64xbf16, #A>, !tile, tensor<64x16xf32, #ACC>
      %dsa = cuir.convert_layout %ds16 : tensor<64x64xbf16, #ACC> -> tensor<64x64xbf16, #A>
      %dq = cuir.gemm %dsa, %sK, %zero16
          : tensor<64x64xbf16, #A>, !tile, tensor<64x16xf32, #ACC>
      cuir.atomic_add %dq -> %acc_rows[%q0, %c0] : tensor<64x16xf32, #ACC> -> !arows
      // Q, dO, P and dS are overwritten by the next step.
      cuir.barrier.sync
      scf.yield %dk_n, %dv_n : tensor<64x16xf32, #ACC>, tensor<64x16xf32, #ACC>
    }
    scf.yield %dk_m, %dv_m : tensor<64x16xf32, #ACC>, tensor<64x16xf32, #ACC>
  }
  %sc = tensor.splat %scale : tensor<64x16xf32, #ACC>
  %dk_s = arith.mulf %dk_acc, %sc : tensor<64x16xf32, #ACC>
  %dk16 = arith.truncf %dk_s : tensor<64x16xf32, #ACC> to tensor<64x16xbf16, #ACC>
  %dv16 = arith.truncf %dv_acc : tensor<64x16xf32, #ACC> to tensor<64x16xbf16, #ACC>
  %dk_rows = memref.subview %dK[%b, 0, %hk, 0] [1, %Nkv, 1, 16] [1, 1, 1, 1] : !seq to !rows
  %dv_rows = memref.subview %dV[%b, 0, %hk, 0] [1, %Nkv, 1, 16] [1, 1, 1, 1] : !seq to !rows
  cuir.store %dk16 -> %dk_rows[%kv0, %c0] : tensor<64x16xbf16, #ACC> -> !rows
  cuir.store %dv16 -> %dv_rows[%kv0, %c0] : tensor<64x16xbf16, #ACC> -> !rows
  cuir.return
}

cuir.kernel @bwd_convert(
    %dQacc: !acc {cuir.arg = "workspace:dq_accum",
                  cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, nq, hq, d)>},
    %dQ: !seq {cuir.arg = "dq"}, %scale: f32 {cuir.arg = "softmax_scale"},
    %B: index {cuir.arg = "B"}, %Hq: index {cuir.arg = "Hq"},
    %Hkv: index {cuir.arg = "Hkv"}, %Nq: index {cuir.arg = "Nq"},
    %Nkv: index {cuir.arg = "Nkv"})
    grid (b, hq, hkv, nq, nkv) -> (nq ceildiv 64, hq, b)
    threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m = cuir.block_id x
  %h = cuir.block_id y
  %b = cuir.block_id z
  %q0 = arith.muli %m, %c64 : index
  %acc_rows = memref.subview %dQacc[%b, 0, %h, 0] [1, %Nq, 1, 16] [1, 1, 1, 1] : !acc to !arows
  %dq_rows = memref.subview %dQ[%b, 0, %h, 0] [1, %Nq, 1, 16] [1, 1, 1, 1] : !seq to !rows
  %sA = cuir.alloc : memref<64x16xf32, #S>
  %t = cuir.copy_async cp_async %acc_rows[%q0, %c0] -> %sA
      : !arows -> memref<64x16xf32, #S> -> !cuir.token
  %g = cuir.commit %t
  cuir.wait_group %g pending 0
  cuir.barrier.sync
  %a = cuir.load %sA : memref<64x16xf32, #S> -> tensor<64x16xf32, #ACC>
  %sc = tensor.splat %scale : tensor<64x16xf32, #ACC>
  %dq = arith.mulf %a, %sc : tensor<64x16xf32, #ACC>
  %dq16 = arith.truncf %dq : tensor<64x16xf32, #ACC> to tensor<64x16xbf16, #ACC>
  cuir.store %dq16 -> %dq_rows[%q0, %c0] : tensor<64x16xbf16, #ACC> -> !rows
  cuir.return
}
