// RUN: cuir-opt %s -split-input-file --cuir-split-full-partial -verify-diagnostics
//
// The split needs the Target CuIR of a kernel in the FA2 form.

// A kernel that --transfer has not seen: nothing to split.
#A   = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#ROW = #cuir.frag<row, mma_m16n8k16, warps = [4, 1]>
!g = memref<?x?x?x16xbf16, #cuir.mem<global>>
!rows = memref<?x16xbf16, strided<[?, 1], offset: ?>, #cuir.mem<global>>
!ring = memref<2x32x16xbf16, #cuir.mem<shared>>
!tile = memref<32x16xbf16, strided<[16, 1], offset: ?>, #cuir.mem<shared>>
!qt = memref<64x16xbf16, #cuir.mem<shared>>
// expected-error @below {{has no variant scores to split (cuir.elementwise with 'cuir.variant_scores'): run --transfer first}}
cuir.kernel @source(%Q: !g {cuir.arg = "q"}, %K: !g {cuir.arg = "k"},
                    %V: !g {cuir.arg = "v"}, %O: !g {cuir.arg = "o"},
                    %n: index {cuir.arg = "Nkv"})
    grid (n) -> (n, n, n) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = cuir.block_id z
  %h = cuir.block_id y
  %rows = memref.subview %Q[%b, 0, %h, 0] [1, %n, 1, 16] [1, 1, 1, 1] : !g to !rows
  %sQ = cuir.alloc : !qt
  %sK = cuir.alloc : !ring
  cuir.copy %rows[%c0, %c0] -> %sQ : !rows -> !qt
  %z = arith.constant dense<0.0> : tensor<64x32xf32, #ACC>
  %o0 = arith.constant dense<0.0> : tensor<64x16xf32, #ACC>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%o = %o0) -> (tensor<64x16xf32, #ACC>) {
    %stage = arith.remui %j, %c2 : index
    %sKj = memref.subview %sK[%stage, 0, 0] [1, 32, 16] [1, 1, 1] : !ring to !tile
    %s = cuir.gemm %sQ, %sKj transpose_b, %z : !qt, !tile, tensor<64x32xf32, #ACC>
    %m = cuir.reduce_rows max %s : tensor<64x32xf32, #ACC> -> tensor<64xf32, #ROW>
    %p = math.exp %s : tensor<64x32xf32, #ACC>
    %p16 = arith.truncf %p : tensor<64x32xf32, #ACC> to tensor<64x32xbf16, #ACC>
    %pa = cuir.convert_layout %p16 : tensor<64x32xbf16, #ACC> -> tensor<64x32xbf16, #A>
    %o2 = cuir.gemm %pa, %sKj, %o : tensor<64x32xbf16, #A>, !tile, tensor<64x16xf32, #ACC>
    scf.yield %o2 : tensor<64x16xf32, #ACC>
  }
  cuir.return
}

// -----

// One key/value loop (the hand-written FA2 kernel's form), not masking
// steps followed by unmasked steps.
#A   = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#ROW = #cuir.frag<row, mma_m16n8k16, warps = [4, 1]>
!g = memref<?x?x?x16xbf16, #cuir.mem<global>>
!rows = memref<?x16xbf16, strided<[?, 1], offset: ?>, #cuir.mem<global>>
!ring = memref<2x32x16xbf16, #cuir.mem<shared>>
!tile = memref<32x16xbf16, strided<[16, 1], offset: ?>, #cuir.mem<shared>>
!qt = memref<64x16xbf16, #cuir.mem<shared>>
// expected-error @below {{has 1 key/value loop(s); the split expects the FA2 form: a loop of masking steps followed by a loop of unmasked steps, chained by their carried values}}
cuir.kernel @one_loop(%Q: !g {cuir.arg = "q"}, %K: !g {cuir.arg = "k"},
                      %V: !g {cuir.arg = "v"}, %O: !g {cuir.arg = "o"},
                      %n: index {cuir.arg = "Nkv"})
    grid (n) -> (n, n, n) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %ninf = arith.constant 0xFF800000 : f32
  %b = cuir.block_id z
  %h = cuir.block_id y
  %rows = memref.subview %Q[%b, 0, %h, 0] [1, %n, 1, 16] [1, 1, 1, 1] : !g to !rows
  %sQ = cuir.alloc : !qt
  %sK = cuir.alloc : !ring
  cuir.copy %rows[%c0, %c0] -> %sQ : !rows -> !qt
  %z = arith.constant dense<0.0> : tensor<64x32xf32, #ACC>
  %o0 = arith.constant dense<0.0> : tensor<64x16xf32, #ACC>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%o = %o0) -> (tensor<64x16xf32, #ACC>) {
    %stage = arith.remui %j, %c2 : index
    %sKj = memref.subview %sK[%stage, 0, 0] [1, 32, 16] [1, 1, 1] : !ring to !tile
    %s = cuir.gemm %sQ, %sKj transpose_b, %z : !qt, !tile, tensor<64x32xf32, #ACC>
    %kv0 = arith.muli %j, %c2 : index
    %v = cuir.elementwise (%s) at [%b, %h, %c0, %kv0] {cuir.variant_scores = "causal"}
        : (tensor<64x32xf32, #ACC>) -> tensor<64x32xf32, #ACC> {
    ^bb0(%x: f32, %bi: index, %hi: index, %qi: index, %ki: index):
      %seen = arith.cmpi sle, %ki, %qi : index
      %y = arith.select %seen, %x, %ninf : f32
      cuir.yield %y : f32
    }
    %m = cuir.reduce_rows max %v : tensor<64x32xf32, #ACC> -> tensor<64xf32, #ROW>
    %p = math.exp %v : tensor<64x32xf32, #ACC>
    %p16 = arith.truncf %p : tensor<64x32xf32, #ACC> to tensor<64x32xbf16, #ACC>
    %pa = cuir.convert_layout %p16 : tensor<64x32xbf16, #ACC> -> tensor<64x32xbf16, #A>
    %o2 = cuir.gemm %pa, %sKj, %o : tensor<64x32xbf16, #A>, !tile, tensor<64x16xf32, #ACC>
    scf.yield %o2 : tensor<64x16xf32, #ACC>
  }
  cuir.return
}
