// RUN: cuir-opt %s | FileCheck %s
// RUN: cuir-opt %s | cuir-opt | FileCheck %s
//
// The structure of a FlashAttention-2-style forward kernel written by hand:
// one block of 4 warps computes 128 query rows of one (batch, head); K and V
// tiles of 64 rows stream through a two-stage cp.async ring; S = Q K^T and
// O += P V run on mma.sync; the online softmax lives in registers.

#A   = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#ROW = #cuir.frag<row, mma_m16n8k16, warps = [4, 1]>
#G   = #cuir.mem<global>
#S   = #cuir.mem<shared>

// Q, K, V, O are [B, N, H, d] with d = 128; LSE is [B, H, Nq].
!seq  = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G>
!rows = memref<?x128xbf16, strided<[?, 1], offset: ?>, #G>
!lse  = memref<?x?x?xf32, #G>
!lrow = memref<?xf32, strided<[1], offset: ?>, #G>
!ring = memref<2x64x128xbf16, #S>
!tile = memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>

// CHECK-LABEL: cuir.kernel @flash_fwd
// CHECK-SAME: grid (d0, d1, d2, d3, d4) -> (d3 ceildiv 128, d1, d0) threads 128 arch "sm_80"
cuir.kernel @flash_fwd(%Q: !seq {cuir.arg = "q"}, %K: !seq {cuir.arg = "k"},
                       %V: !seq {cuir.arg = "v"}, %O: !seq {cuir.arg = "o"},
                       %LSE: !lse {cuir.arg = "lse"},
                       %scale_log2: f32 {cuir.arg = "softmax_scale_log2"},
                       %B: index {cuir.arg = "B"}, %Hq: index {cuir.arg = "Hq"},
                       %Hkv: index {cuir.arg = "Hkv"},
                       %Nq: index {cuir.arg = "Nq"},
                       %Nkv: index {cuir.arg = "Nkv"})
    grid (b, hq, hkv, nq, nkv) -> (nq ceildiv 128, hq, b)
    threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %ninf = arith.constant 0xFF800000 : f32

  // Which rows this block owns; GQA maps query head h to KV head h / (Hq/Hkv).
  %m_block = cuir.block_id x
  %h = cuir.block_id y
  %b = cuir.block_id z
  %group = arith.divui %Hq, %Hkv : index
  %h_kv = arith.divui %h, %group : index
  %q0 = arith.muli %m_block, %c128 : index
  %q_rows = memref.subview %Q[%b, 0, %h, 0] [1, %Nq, 1, 128] [1, 1, 1, 1]
      : !seq to !rows
  %k_rows = memref.subview %K[%b, 0, %h_kv, 0] [1, %Nkv, 1, 128] [1, 1, 1, 1]
      : !seq to !rows
  %v_rows = memref.subview %V[%b, 0, %h_kv, 0] [1, %Nkv, 1, 128] [1, 1, 1, 1]
      : !seq to !rows
  %o_rows = memref.subview %O[%b, 0, %h, 0] [1, %Nq, 1, 128] [1, 1, 1, 1]
      : !seq to !rows
  %lse_row = memref.subview %LSE[%b, %h, 0] [1, 1, %Nq] [1, 1, 1]
      : !lse to !lrow

  // CHECK: cuir.alloc : memref<128x128xbf16, #shared>
  %sQ = cuir.alloc : memref<128x128xbf16, #S>
  %sK = cuir.alloc {swizzle = 128} : !ring
  %sV = cuir.alloc {swizzle = 128} : !ring

  // Prologue: Q and the first K tile in flight, one group each.
  // CHECK: cuir.copy_async cp_async
  %tq = cuir.copy_async cp_async %q_rows[%q0, %c0] -> %sQ
      : !rows -> memref<128x128xbf16, #S> -> !cuir.token
  %gq = cuir.commit %tq
  %sK0 = memref.subview %sK[%c0, 0, 0] [1, 64, 128] [1, 1, 1] : !ring to !tile
  %tk0 = cuir.copy_async cp_async %k_rows[%c0, %c0] -> %sK0
      : !rows -> !tile -> !cuir.token
  %gk0 = cuir.commit %tk0
  // CHECK: cuir.wait_group %{{.*}} pending 1
  cuir.wait_group %gq pending 1
  cuir.barrier.sync
  %q = cuir.load %sQ : memref<128x128xbf16, #S> -> tensor<128x128xbf16, #A>

  %m_init = arith.constant dense<0xFF800000> : tensor<128xf32, #ROW>
  %l_init = arith.constant dense<0.0> : tensor<128xf32, #ROW>
  %o_init = arith.constant dense<0.0> : tensor<128x128xf32, #ACC>
  %s_zero = arith.constant dense<0.0> : tensor<128x64xf32, #ACC>
  %scale = tensor.splat %scale_log2 : tensor<128x64xf32, #ACC>
  %scale_row = tensor.splat %scale_log2 : tensor<128xf32, #ROW>
  %n_blocks = arith.ceildivui %Nkv, %c64 : index

  // CHECK: scf.for
  %m, %l, %acc, %gk_last = scf.for %j = %c0 to %n_blocks step %c1
      iter_args(%m_i = %m_init, %l_i = %l_init, %acc_i = %o_init, %gk = %gk0)
      -> (tensor<128xf32, #ROW>, tensor<128xf32, #ROW>,
          tensor<128x128xf32, #ACC>, !cuir.group) {
    %stage = arith.remui %j, %c2 : index
    %kv0 = arith.muli %j, %c64 : index
    %sKj = memref.subview %sK[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
        : !ring to !tile
    %sVj = memref.subview %sV[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
        : !ring to !tile

    // V_j streams in while S_j is computed.
    %tv = cuir.copy_async cp_async %v_rows[%kv0, %c0] -> %sVj
        : !rows -> !tile -> !cuir.token
    %gv = cuir.commit %tv
    cuir.wait_group %gk pending 1
    cuir.barrier.sync
    // CHECK: cuir.gemm {{.*}} transpose_b
    %s = cuir.gemm %q, %sKj transpose_b, %s_zero
        : tensor<128x128xbf16, #A>, !tile, tensor<128x64xf32, #ACC>

    // Prefetch K_{j+1} into the other stage.
    %next = arith.addi %j, %c1 : index
    %has_next = arith.cmpi ult, %next, %n_blocks : index
    %gk_next = scf.if %has_next -> !cuir.group {
      %other = arith.subi %c1, %stage : index
      %kv1 = arith.muli %next, %c64 : index
      %sKn = memref.subview %sK[%other, 0, 0] [1, 64, 128] [1, 1, 1]
          : !ring to !tile
      %tk = cuir.copy_async cp_async %k_rows[%kv1, %c0] -> %sKn
          : !rows -> !tile -> !cuir.token
      %g = cuir.commit %tk
      scf.yield %g : !cuir.group
    } else {
      %g = cuir.commit
      scf.yield %g : !cuir.group
    }

    // Mask the ragged tail of the keys.
    // CHECK: cuir.elementwise
    %s_masked = cuir.elementwise (%s) at [%b, %h, %q0, %kv0]
        : (tensor<128x64xf32, #ACC>) -> tensor<128x64xf32, #ACC> {
    ^bb0(%x: f32, %bi: index, %hi: index, %qi: index, %ki: index):
      %in = arith.cmpi ult, %ki, %Nkv : index
      %r = arith.select %in, %x, %ninf : f32
      cuir.yield %r : f32
    }

    // Online softmax: new row max, rescale factor, probabilities, row sum.
    // CHECK: cuir.reduce_rows max
    %blk_max = cuir.reduce_rows max %s_masked
        : tensor<128x64xf32, #ACC> -> tensor<128xf32, #ROW>
    %m_new = arith.maximumf %m_i, %blk_max : tensor<128xf32, #ROW>
    %dm = arith.subf %m_i, %m_new : tensor<128xf32, #ROW>
    %dm_s = arith.mulf %dm, %scale_row : tensor<128xf32, #ROW>
    %alpha = math.exp2 %dm_s : tensor<128xf32, #ROW>
    %s_s = arith.mulf %s_masked, %scale : tensor<128x64xf32, #ACC>
    %m_s = arith.mulf %m_new, %scale_row : tensor<128xf32, #ROW>
    // CHECK: cuir.broadcast_rows
    %m_b = cuir.broadcast_rows %m_s
        : tensor<128xf32, #ROW> -> tensor<128x64xf32, #ACC>
    %centered = arith.subf %s_s, %m_b : tensor<128x64xf32, #ACC>
    %p = math.exp2 %centered : tensor<128x64xf32, #ACC>
    %p_sum = cuir.reduce_rows sum %p
        : tensor<128x64xf32, #ACC> -> tensor<128xf32, #ROW>
    %l_scaled = arith.mulf %l_i, %alpha : tensor<128xf32, #ROW>
    %l_new = arith.addf %l_scaled, %p_sum : tensor<128xf32, #ROW>
    %alpha_b = cuir.broadcast_rows %alpha
        : tensor<128xf32, #ROW> -> tensor<128x128xf32, #ACC>
    %acc_scaled = arith.mulf %acc_i, %alpha_b : tensor<128x128xf32, #ACC>

    // O += P V with P reused from registers as the A operand.
    %p16 = arith.truncf %p : tensor<128x64xf32, #ACC> to tensor<128x64xbf16, #ACC>
    // CHECK: cuir.convert_layout
    %pa = cuir.convert_layout %p16
        : tensor<128x64xbf16, #ACC> -> tensor<128x64xbf16, #A>
    cuir.wait_group %gv pending 1
    cuir.barrier.sync
    %acc_new = cuir.gemm %pa, %sVj, %acc_scaled
        : tensor<128x64xbf16, #A>, !tile, tensor<128x128xf32, #ACC>
    cuir.barrier.sync
    scf.yield %m_new, %l_new, %acc_new, %gk_next
        : tensor<128xf32, #ROW>, tensor<128xf32, #ROW>,
          tensor<128x128xf32, #ACC>, !cuir.group
  }
  cuir.wait_group %gk_last pending 0

  // Epilogue: O = acc / l; LSE = m * scale + log(l).
  %one = arith.constant dense<1.0> : tensor<128xf32, #ROW>
  %inv_l = arith.divf %one, %l : tensor<128xf32, #ROW>
  %inv_l_b = cuir.broadcast_rows %inv_l
      : tensor<128xf32, #ROW> -> tensor<128x128xf32, #ACC>
  %o = arith.mulf %acc, %inv_l_b : tensor<128x128xf32, #ACC>
  %o16 = arith.truncf %o : tensor<128x128xf32, #ACC> to tensor<128x128xbf16, #ACC>
  // CHECK: cuir.store {{.*}} -> %{{.*}}[%{{.*}}, %{{.*}}]
  cuir.store %o16 -> %o_rows[%q0, %c0] : tensor<128x128xbf16, #ACC> -> !rows
  %ln2 = arith.constant dense<0.693147182> : tensor<128xf32, #ROW>
  %m_nat = arith.mulf %m, %scale_row : tensor<128xf32, #ROW>
  %m_ln = arith.mulf %m_nat, %ln2 : tensor<128xf32, #ROW>
  %log_l = math.log %l : tensor<128xf32, #ROW>
  %lse = arith.addf %m_ln, %log_l : tensor<128xf32, #ROW>
  cuir.store %lse -> %lse_row[%q0] : tensor<128xf32, #ROW> -> !lrow
  cuir.return
}
