// An attention kernel whose KV loop walks the block lists of its
// cuir.block_mask (the Target CuIR form of a runtime block mask): a block of
// 4 warps computes 64 query rows of one (batch, head); virtual block j is the
// j-th partial tile of the row's kv_indices for j < kv_num_blocks, then the
// full tiles of full_kv_indices. K and V tiles of 64 keys stream through a
// two-stage cp.async ring, K of the next listed tile prefetched into the
// other stage before S = Q K^T; only partial tiles apply the mask.
//
// The mask is a prefix-LM (bottom-right aligned): key kv is visible to query
// q if kv < prefix_len[b] or kv <= q + Nkv - Nq. It reads b, so the lists
// are per batch and the row of query tile m is b * QB + m.
//
// The HAZARD lines are for block-list-hazard.test, which plants a prefetch
// of the next listed tile into the current stage (whose own copy is still
// in flight, and which the GEMM is about to read) and makes them
// expected-*.

#A   = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#ROW = #cuir.frag<row, mma_m16n8k16, warps = [4, 1]>
#G   = #cuir.mem<global>
#S   = #cuir.mem<shared>
!seq  = memref<?x?x?x16xbf16, #G>
!rows = memref<?x16xbf16, strided<[?, 1], offset: ?>, #G>
!ring = memref<2x64x16xbf16, #S>
!tile = memref<64x16xbf16, strided<[16, 1], offset: ?>, #S>
!list = memref<?xi32, #G>

cuir.block_mask @prefix_blocks(
    %prefix: memref<?xi32, #G> {cuir.arg = "param:prefix_len", cuir.extent = "batch"},
    %Nq: index {cuir.arg = "Nq"}, %Nkv: index {cuir.arg = "Nkv"})
    tiles 64 x 64 depends [batch] coords(%b, %h, %q, %kv) {
  %len = memref.load %prefix[%b] : memref<?xi32, #G>
  %leni = arith.index_cast %len : i32 to index
  %in_prefix = arith.cmpi slt, %kv, %leni : index
  %off = arith.subi %Nkv, %Nq : index
  %last = arith.addi %q, %off : index
  %below = arith.cmpi sle, %kv, %last : index
  %visible = arith.ori %in_prefix, %below : i1
  cuir.yield %visible : i1
}

cuir.kernel @listed(%Q: !seq {cuir.arg = "q"}, %K: !seq {cuir.arg = "k"},
                    %V: !seq {cuir.arg = "v"}, %O: !seq {cuir.arg = "o"},
                    %scale: f32 {cuir.arg = "softmax_scale"},
                    %B: index {cuir.arg = "B"}, %Hq: index {cuir.arg = "Hq"},
                    %Hkv: index {cuir.arg = "Hkv"}, %Nq: index {cuir.arg = "Nq"},
                    %Nkv: index {cuir.arg = "Nkv"},
                    %prefix: memref<?xi32, #G> {cuir.arg = "param:prefix_len", cuir.extent = "batch"},
                    %kvn: !list {cuir.arg = "block_mask:kv_num_blocks"},
                    %kvi: !list {cuir.arg = "block_mask:kv_indices"},
                    %fkvn: !list {cuir.arg = "block_mask:full_kv_num_blocks"},
                    %fkvi: !list {cuir.arg = "block_mask:full_kv_indices"})
    grid (b, hq, hkv, nq, nkv) -> (nq ceildiv 64, hq, b)
    threads 128 arch "sm_80" attributes {cuir.block_mask = @prefix_blocks} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %true = arith.constant true
  %ninf = arith.constant 0xFF800000 : f32
  %m_block = cuir.block_id x
  %h = cuir.block_id y
  %b = cuir.block_id z
  %group = arith.divui %Hq, %Hkv : index
  %h_kv = arith.divui %h, %group : index
  %q0 = arith.muli %m_block, %c64 : index
  %q_rows = memref.subview %Q[%b, 0, %h, 0] [1, %Nq, 1, 16] [1, 1, 1, 1] : !seq to !rows
  %k_rows = memref.subview %K[%b, 0, %h_kv, 0] [1, %Nkv, 1, 16] [1, 1, 1, 1] : !seq to !rows
  %v_rows = memref.subview %V[%b, 0, %h_kv, 0] [1, %Nkv, 1, 16] [1, 1, 1, 1] : !seq to !rows
  %o_rows = memref.subview %O[%b, 0, %h, 0] [1, %Nq, 1, 16] [1, 1, 1, 1] : !seq to !rows

  // This query tile's row of the lists: the partial and full tile counts.
  %QB = arith.ceildivui %Nq, %c64 : index
  %KB = arith.ceildivui %Nkv, %c64 : index
  %bq = arith.muli %b, %QB : index
  %row = arith.addi %bq, %m_block : index
  %base = arith.muli %row, %KB : index
  %np_i = memref.load %kvn[%row] : !list
  %np = arith.index_cast %np_i : i32 to index
  %nf_i = memref.load %fkvn[%row] : !list
  %nf = arith.index_cast %nf_i : i32 to index
  %total = arith.addi %np, %nf : index

  %sQ = cuir.alloc : memref<64x16xbf16, #S>
  %sK = cuir.alloc : !ring
  %sV = cuir.alloc : !ring
  %tq = cuir.copy_async cp_async %q_rows[%q0, %c0] -> %sQ
      : !rows -> memref<64x16xbf16, #S> -> !cuir.token
  %gq = cuir.commit %tq
  // K of the first listed tile, if there is one.
  %has_first = arith.cmpi ugt, %total, %c0 : index
  %gk0 = scf.if %has_first -> !cuir.group {
    %first_partial = arith.cmpi ugt, %np, %c0 : index
    %n0 = scf.if %first_partial -> index {
      %t = memref.load %kvi[%base] : !list
      %ti = arith.index_cast %t : i32 to index
      scf.yield %ti : index
    } else {
      %t = memref.load %fkvi[%base] : !list
      %ti = arith.index_cast %t : i32 to index
      scf.yield %ti : index
    }
    %kv00 = arith.muli %n0, %c64 : index
    %sK0 = memref.subview %sK[%c0, 0, 0] [1, 64, 16] [1, 1, 1] : !ring to !tile
    // HAZARD: note @below {{the copy in flight is issued here}}
    %tk0 = cuir.copy_async cp_async %k_rows[%kv00, %c0] -> %sK0
        : !rows -> !tile -> !cuir.token
    %g = cuir.commit %tk0
    scf.yield %g : !cuir.group
  } else {
    %g = cuir.commit
    scf.yield %g : !cuir.group
  }
  cuir.wait_group %gq pending 1
  cuir.barrier.sync
  %q = cuir.load %sQ : memref<64x16xbf16, #S> -> tensor<64x16xbf16, #A>

  %m_init = arith.constant dense<0xFF800000> : tensor<64xf32, #ROW>
  %l_init = arith.constant dense<0.0> : tensor<64xf32, #ROW>
  %o_init = arith.constant dense<0.0> : tensor<64x16xf32, #ACC>
  %s_zero = arith.constant dense<0.0> : tensor<64x64xf32, #ACC>
  %zero_row = arith.constant dense<0.0> : tensor<64xf32, #ROW>
  %ninf_row = arith.constant dense<0xFF800000> : tensor<64xf32, #ROW>
  %sc = tensor.splat %scale : tensor<64x64xf32, #ACC>

  %mm, %ll, %acc, %gk_last = scf.for %j = %c0 to %total step %c1
      iter_args(%m_i = %m_init, %l_i = %l_init, %o_i = %o_init, %gk = %gk0)
      -> (tensor<64xf32, #ROW>, tensor<64xf32, #ROW>, tensor<64x16xf32, #ACC>, !cuir.group) {
    %stage = arith.remui %j, %c2 : index
    %other = arith.subi %c1, %stage : index
    // The KV tile of virtual block j: partial tiles first, then full ones.
    %partial = arith.cmpi ult, %j, %np : index
    %n = scf.if %partial -> index {
      %at = arith.addi %base, %j : index
      %t = memref.load %kvi[%at] : !list
      %ti = arith.index_cast %t : i32 to index
      scf.yield %ti : index
    } else {
      %jf = arith.subi %j, %np : index
      %at = arith.addi %base, %jf : index
      %t = memref.load %fkvi[%at] : !list
      %ti = arith.index_cast %t : i32 to index
      scf.yield %ti : index
    }
    %kv0 = arith.muli %n, %c64 : index
    %sKj = memref.subview %sK[%stage, 0, 0] [1, 64, 16] [1, 1, 1] : !ring to !tile
    %sVj = memref.subview %sV[%stage, 0, 0] [1, 64, 16] [1, 1, 1] : !ring to !tile
    %tv = cuir.copy_async cp_async %v_rows[%kv0, %c0] -> %sVj
        : !rows -> !tile -> !cuir.token
    %gv = cuir.commit %tv

    // K of the next listed tile, into the other stage.
    %next = arith.addi %j, %c1 : index
    %has_next = arith.cmpi ult, %next, %total : index
    %gk_next = scf.if %has_next -> !cuir.group {
      %next_partial = arith.cmpi ult, %next, %np : index
      %n1 = scf.if %next_partial -> index {
        %at = arith.addi %base, %next : index
        %t = memref.load %kvi[%at] : !list
        %ti = arith.index_cast %t : i32 to index
        scf.yield %ti : index
      } else {
        %jf = arith.subi %next, %np : index
        %at = arith.addi %base, %jf : index
        %t = memref.load %fkvi[%at] : !list
        %ti = arith.index_cast %t : i32 to index
        scf.yield %ti : index
      }
      %kv1 = arith.muli %n1, %c64 : index
      %sKn = memref.subview %sK[%other, 0, 0] [1, 64, 16] [1, 1, 1] : !ring to !tile
      // HAZARD: error @below {{writes memory that an asynchronous copy is still writing}}
      %tk = cuir.copy_async cp_async %k_rows[%kv1, %c0] -> %sKn
          : !rows -> !tile -> !cuir.token
      %g = cuir.commit %tk
      scf.yield %g : !cuir.group
    } else {
      %g = cuir.commit
      scf.yield %g : !cuir.group
    }
    // K_j's group is the oldest of the three in flight.
    cuir.wait_group %gk pending 2
    cuir.barrier.sync
    %s = cuir.gemm %q, %sKj transpose_b, %s_zero
        : tensor<64x16xbf16, #A>, !tile, tensor<64x64xf32, #ACC>

    // Only a partial tile pays for the mask (and the ragged end of the keys).
    %full = arith.xori %partial, %true : i1
    %s_masked = cuir.elementwise (%s) at [%b, %h, %q0, %kv0]
        : (tensor<64x64xf32, #ACC>) -> tensor<64x64xf32, #ACC> {
    ^bb0(%x: f32, %bi: index, %hi: index, %qi: index, %ki: index):
      %len = memref.load %prefix[%bi] : memref<?xi32, #G>
      %leni = arith.index_cast %len : i32 to index
      %in_prefix = arith.cmpi slt, %ki, %leni : index
      %off = arith.subi %Nkv, %Nq : index
      %last = arith.addi %qi, %off : index
      %below = arith.cmpi sle, %ki, %last : index
      %visible = arith.ori %in_prefix, %below : i1
      %in = arith.cmpi ult, %ki, %Nkv : index
      %ok = arith.andi %visible, %in : i1
      %keep = arith.ori %ok, %full : i1
      %r = arith.select %keep, %x, %ninf : f32
      cuir.yield %r : f32
    }

    // Online softmax; a row with no visible key yet keeps its maximum at
    // -inf and centres on 0.
    %s_s = arith.mulf %s_masked, %sc : tensor<64x64xf32, #ACC>
    %mx = cuir.reduce_rows max %s_s : tensor<64x64xf32, #ACC> -> tensor<64xf32, #ROW>
    %m_new = arith.maximumf %m_i, %mx : tensor<64xf32, #ROW>
    %none = arith.cmpf oeq, %m_new, %ninf_row : tensor<64xf32, #ROW>
    %m_safe = arith.select %none, %zero_row, %m_new : tensor<64xi1, #ROW>, tensor<64xf32, #ROW>
    %dm = arith.subf %m_i, %m_safe : tensor<64xf32, #ROW>
    %alpha = math.exp %dm : tensor<64xf32, #ROW>
    %m_b = cuir.broadcast_rows %m_safe : tensor<64xf32, #ROW> -> tensor<64x64xf32, #ACC>
    %cent = arith.subf %s_s, %m_b : tensor<64x64xf32, #ACC>
    %p = math.exp %cent : tensor<64x64xf32, #ACC>
    %ps = cuir.reduce_rows sum %p : tensor<64x64xf32, #ACC> -> tensor<64xf32, #ROW>
    %l_a = arith.mulf %l_i, %alpha : tensor<64xf32, #ROW>
    %l_new = arith.addf %l_a, %ps : tensor<64xf32, #ROW>
    %alpha_b = cuir.broadcast_rows %alpha : tensor<64xf32, #ROW> -> tensor<64x16xf32, #ACC>
    %o_a = arith.mulf %o_i, %alpha_b : tensor<64x16xf32, #ACC>
    %p16 = arith.truncf %p : tensor<64x64xf32, #ACC> to tensor<64x64xbf16, #ACC>
    %pa = cuir.convert_layout %p16 : tensor<64x64xbf16, #ACC> -> tensor<64x64xbf16, #A>
    // V_j's group: the older of the two still in flight.
    cuir.wait_group %gv pending 1
    cuir.barrier.sync
    %o_new = cuir.gemm %pa, %sVj, %o_a
        : tensor<64x64xbf16, #A>, !tile, tensor<64x16xf32, #ACC>
    cuir.barrier.sync
    scf.yield %m_new, %l_new, %o_new, %gk_next
        : tensor<64xf32, #ROW>, tensor<64xf32, #ROW>, tensor<64x16xf32, #ACC>, !cuir.group
  }
  cuir.wait_group %gk_last pending 0
  %one = arith.constant dense<1.0> : tensor<64xf32, #ROW>
  %inv = arith.divf %one, %ll : tensor<64xf32, #ROW>
  %inv_b = cuir.broadcast_rows %inv : tensor<64xf32, #ROW> -> tensor<64x16xf32, #ACC>
  %o = arith.mulf %acc, %inv_b : tensor<64x16xf32, #ACC>
  %o16 = arith.truncf %o : tensor<64x16xf32, #ACC> to tensor<64x16xbf16, #ACC>
  cuir.store %o16 -> %o_rows[%q0, %c0] : tensor<64x16xbf16, #ACC> -> !rows
  cuir.return
}
