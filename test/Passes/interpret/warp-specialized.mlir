// RUN: cuir-opt %s --cuir-interpret="Nq=200 Nkv=333 Hq=2 Hkv=1 d=16" 2>&1 | FileCheck %s
// RUN: cuir-opt %s --cuir-interpret="Nq=64 Nkv=64 d=16 B=2" 2>&1 | FileCheck %s
//
// A warp-specialized attention kernel in the style of FA3: a producer warp
// streams K and V tiles by TMA into a two-stage ring guarded by "full" and
// "empty" mbarriers; a consumer warpgroup computes on wgmma. The interpreter
// runs the two workers, switching at barrier waits, and matches the
// reference.

// CHECK: remark: matches the reference: @fa3_like

// Without the consumer's wait on Q's "full" barrier, its first GEMM reads Q
// before it may: the producer's TMA copy has landed (the producer ran first
// and its phase completed), but the consumer never waited for that phase, so
// the copy is still in flight as far as the consumer is concerned.
// RUN: sed '/cuir.barrier.wait %%q_full/d' %s > %t.nowait.mlir
// RUN: not cuir-opt %t.nowait.mlir --cuir-interpret="Nq=64 Nkv=64 d=16" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOWAIT
// NOWAIT: error: reads memory that an asynchronous copy is still writing; wait for its group or barrier phase first
// NOWAIT: note: the copy in flight is issued here

// Releasing a stage before the GEMM that reads it has been waited for: the
// producer's next copy into that stage may overtake the wgmma's reads.
// RUN: sed -e '/^ *cuir.barrier.arrive %%empty/d' -e '/^ *%%o_new = cuir.gemm_wait/i\      cuir.barrier.arrive %%empty[%%stage] : !cuir.mbarrier<2>' %s > %t.early.mlir
// RUN: not cuir-opt %t.early.mlir --cuir-interpret="Nq=64 Nkv=333 d=16" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EARLY
// EARLY: error: overwrites shared memory that threads of the block read with no barrier since
// EARLY-NEXT: cuir.copy_async tma %v_rows
// EARLY: note: the read is here
// EARLY-NEXT: %o_pending = cuir.gemm_async

#WA   = #cuir.frag<a, wgmma_m64nNk16, warps = [1, 1]>
#WACC = #cuir.frag<acc, wgmma_m64nNk16, warps = [1, 1]>
#WROW = #cuir.frag<row, wgmma_m64nNk16, warps = [1, 1]>
#G = #cuir.mem<global>
#S = #cuir.mem<shared>
!seq  = memref<?x?x?x16xbf16, #G>
!rows = memref<?x16xbf16, strided<[?, 1], offset: ?>, #G>
!ring = memref<2x64x16xbf16, #S>
!tile = memref<64x16xbf16, strided<[16, 1], offset: ?>, #S>

cuir.kernel @fa3_like(%Q: !seq {cuir.arg = "q"}, %K: !seq {cuir.arg = "k"},
                      %V: !seq {cuir.arg = "v"}, %O: !seq {cuir.arg = "o"},
                      %scale: f32 {cuir.arg = "softmax_scale"},
                      %B: index {cuir.arg = "B"}, %Hq: index {cuir.arg = "Hq"},
                      %Hkv: index {cuir.arg = "Hkv"}, %Nq: index {cuir.arg = "Nq"},
                      %Nkv: index {cuir.arg = "Nkv"})
    grid (b, hq, hkv, nq, nkv) -> (nq ceildiv 64, hq, b)
    threads 256 arch "sm_90a" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %m = cuir.block_id x
  %h = cuir.block_id y
  %b = cuir.block_id z
  %group = arith.divui %Hq, %Hkv : index
  %hk = arith.divui %h, %group : index
  %q0 = arith.muli %m, %c64 : index
  %q_rows = memref.subview %Q[%b, 0, %h, 0] [1, %Nq, 1, 16] [1, 1, 1, 1] : !seq to !rows
  %k_rows = memref.subview %K[%b, 0, %hk, 0] [1, %Nkv, 1, 16] [1, 1, 1, 1] : !seq to !rows
  %v_rows = memref.subview %V[%b, 0, %hk, 0] [1, %Nkv, 1, 16] [1, 1, 1, 1] : !seq to !rows
  %o_rows = memref.subview %O[%b, 0, %h, 0] [1, %Nq, 1, 16] [1, 1, 1, 1] : !seq to !rows
  %n_blocks = arith.ceildivui %Nkv, %c64 : index

  %sQ = cuir.alloc : memref<64x16xbf16, #S>
  %sK = cuir.alloc : !ring
  %sV = cuir.alloc : !ring
  %q_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<1>
  %full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<2>
  %empty = cuir.barrier.init arrivals 1 : !cuir.mbarrier<2>

  cuir.bind warpgroup [0] role producer regs 24 {
    cuir.bind warp [0] role producer {
      cuir.barrier.arrive %q_full[%c0] expect_tx 2048 : !cuir.mbarrier<1>
      cuir.copy_async tma %q_rows[%q0, %c0] -> %sQ barrier %q_full[%c0]
          : !rows -> memref<64x16xbf16, #S>, !cuir.mbarrier<1>
      scf.for %j = %c0 to %n_blocks step %c1 {
        %stage = arith.remui %j, %c2 : index
        %round = arith.divui %j, %c2 : index
        // Wait until the consumer has released this stage (round r - 1).
        %r1 = arith.addi %round, %c1 : index
        %parity = arith.remui %r1, %c2 : index
        cuir.barrier.wait %empty[%stage], %parity : !cuir.mbarrier<2>
        %kv0 = arith.muli %j, %c64 : index
        %sKj = memref.subview %sK[%stage, 0, 0] [1, 64, 16] [1, 1, 1] : !ring to !tile
        %sVj = memref.subview %sV[%stage, 0, 0] [1, 64, 16] [1, 1, 1] : !ring to !tile
        cuir.barrier.arrive %full[%stage] expect_tx 4096 : !cuir.mbarrier<2>
        cuir.copy_async tma %k_rows[%kv0, %c0] -> %sKj barrier %full[%stage]
            : !rows -> !tile, !cuir.mbarrier<2>
        cuir.copy_async tma %v_rows[%kv0, %c0] -> %sVj barrier %full[%stage]
            : !rows -> !tile, !cuir.mbarrier<2>
      }
    }
  }
  cuir.bind warpgroup [1] role consumer regs 240 {
    %ninf = arith.constant 0xFF800000 : f32
    %m_init = arith.constant dense<0xFF800000> : tensor<64xf32, #WROW>
    %l_init = arith.constant dense<0.0> : tensor<64xf32, #WROW>
    %o_init = arith.constant dense<0.0> : tensor<64x16xf32, #WACC>
    %s_zero = arith.constant dense<0.0> : tensor<64x64xf32, #WACC>
    %sc = tensor.splat %scale : tensor<64x64xf32, #WACC>
    %sc_row = tensor.splat %scale : tensor<64xf32, #WROW>
    cuir.barrier.wait %q_full[%c0], %c0 : !cuir.mbarrier<1>
    %mm, %ll, %acc = scf.for %j = %c0 to %n_blocks step %c1
        iter_args(%m_i = %m_init, %l_i = %l_init, %o_i = %o_init)
        -> (tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64x16xf32, #WACC>) {
      %stage = arith.remui %j, %c2 : index
      %round = arith.divui %j, %c2 : index
      %parity = arith.remui %round, %c2 : index
      %kv0 = arith.muli %j, %c64 : index
      %sKj = memref.subview %sK[%stage, 0, 0] [1, 64, 16] [1, 1, 1] : !ring to !tile
      %sVj = memref.subview %sV[%stage, 0, 0] [1, 64, 16] [1, 1, 1] : !ring to !tile
      cuir.barrier.wait %full[%stage], %parity : !cuir.mbarrier<2>
      %s_pending = cuir.gemm_async %sQ, %sKj transpose_b, %s_zero
          : memref<64x16xbf16, #S>, !tile, tensor<64x64xf32, #WACC>
      %s = cuir.gemm_wait %s_pending pending 0 : tensor<64x64xf32, #WACC>
      %s_masked = cuir.elementwise (%s) at [%b, %h, %q0, %kv0]
          : (tensor<64x64xf32, #WACC>) -> tensor<64x64xf32, #WACC> {
      ^bb0(%x: f32, %bi: index, %hi: index, %qi: index, %ki: index):
        %in = arith.cmpi ult, %ki, %Nkv : index
        %r = arith.select %in, %x, %ninf : f32
        cuir.yield %r : f32
      }
      %s_s = arith.mulf %s_masked, %sc : tensor<64x64xf32, #WACC>
      %mx = cuir.reduce_rows max %s_s : tensor<64x64xf32, #WACC> -> tensor<64xf32, #WROW>
      %m_new = arith.maximumf %m_i, %mx : tensor<64xf32, #WROW>
      %dm = arith.subf %m_i, %m_new : tensor<64xf32, #WROW>
      %alpha = math.exp %dm : tensor<64xf32, #WROW>
      %m_b = cuir.broadcast_rows %m_new : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC>
      %cent = arith.subf %s_s, %m_b : tensor<64x64xf32, #WACC>
      %p = math.exp %cent : tensor<64x64xf32, #WACC>
      %ps = cuir.reduce_rows sum %p : tensor<64x64xf32, #WACC> -> tensor<64xf32, #WROW>
      %l_a = arith.mulf %l_i, %alpha : tensor<64xf32, #WROW>
      %l_new = arith.addf %l_a, %ps : tensor<64xf32, #WROW>
      %alpha_b = cuir.broadcast_rows %alpha : tensor<64xf32, #WROW> -> tensor<64x16xf32, #WACC>
      %o_a = arith.mulf %o_i, %alpha_b : tensor<64x16xf32, #WACC>
      %p16 = arith.truncf %p : tensor<64x64xf32, #WACC> to tensor<64x64xbf16, #WACC>
      %pa = cuir.convert_layout %p16 : tensor<64x64xbf16, #WACC> -> tensor<64x64xbf16, #WA>
      %o_pending = cuir.gemm_async %pa, %sVj, %o_a
          : tensor<64x64xbf16, #WA>, !tile, tensor<64x16xf32, #WACC>
      %o_new = cuir.gemm_wait %o_pending pending 0 : tensor<64x16xf32, #WACC>
      // Release the stage to the producer.
      cuir.barrier.arrive %empty[%stage] : !cuir.mbarrier<2>
      scf.yield %m_new, %l_new, %o_new
          : tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64x16xf32, #WACC>
    }
    %one = arith.constant dense<1.0> : tensor<64xf32, #WROW>
    %inv = arith.divf %one, %ll : tensor<64xf32, #WROW>
    %inv_b = cuir.broadcast_rows %inv : tensor<64xf32, #WROW> -> tensor<64x16xf32, #WACC>
    %o = arith.mulf %acc, %inv_b : tensor<64x16xf32, #WACC>
    %o16 = arith.truncf %o : tensor<64x16xf32, #WACC> to tensor<64x16xbf16, #WACC>
    cuir.store %o16 -> %o_rows[%q0, %c0] : tensor<64x16xbf16, #WACC> -> !rows
  }
  cuir.return
}
